// Groups of up to four floats in the Python module's kernels (texture channels, interpolate's attributes): their DSL
// type, reads, writes and sums, and how wide a group is.
#pragma once
#include <adjoint/adjoint.h>

#include <algorithm>
#include <array>
#include <type_traits>

namespace adjoint::python {

// Chan<W>: the DSL type of W = 1..4 floats, a group of channels or attributes that a kernel takes at once.
template <int W>
using Chan = std::conditional_t<W == 1, Float,
                                std::conditional_t<W == 2, Float2, std::conditional_t<W == 3, Float3, Float4>>>;
template <int W>
Chan<W> spread(const Float& v) {
    if constexpr (W == 1) return v;
    else if constexpr (W == 2) return make_float2(v);
    else if constexpr (W == 3) return make_float3(v);
    else return make_float4(v);
}
// W floats of `buf` from `at`.
template <int W, typename B>
Chan<W> read_channels(const B& buf, const UInt& at) {
    if constexpr (W == 1) return buf.read(at);
    else if constexpr (W == 2) return make_float2(buf.read(at), buf.read(at + 1u));
    else if constexpr (W == 3) return make_float3(buf.read(at), buf.read(at + 1u), buf.read(at + 2u));
    else return make_float4(buf.read(at), buf.read(at + 1u), buf.read(at + 2u), buf.read(at + 3u));
}
template <int W>
void write_channels(const BufferFloat& buf, const UInt& at, const Chan<W>& v) {
    if constexpr (W == 1) {
        buf.write(at, v);
    } else {
        for (int i = 0; i < W; ++i) buf.write(at + uint32_t(i), v[i]);
    }
}
// Float c of a group.
template <int W>
Float channel(const Chan<W>& v, int c) {
    if constexpr (W == 1) return v;
    else return v[c];
}
template <int W>
Float sum_channels(const Chan<W>& v) {
    if constexpr (W == 1) return v;
    else return dot(v, spread<W>(1.0f));
}
// The group width for `channels` (or attributes): all of them up to 4, else the widest of 4, 3, 2 that divides them.
inline uint32_t group_width(uint32_t channels) {
    if (channels <= 4) return std::max(channels, 1u);
    for (uint32_t w : {4u, 3u, 2u})
        if (channels % w == 0) return w;
    return 1;
}
// f.template operator()<W>() for the run-time width w (1..4): picks a kernel compiled for that width.
template <typename F>
decltype(auto) with_group_width(uint32_t w, F&& f) {
    switch (w) {
    case 1: return f.template operator()<1>();
    case 2: return f.template operator()<2>();
    case 3: return f.template operator()<3>();
    default: return f.template operator()<4>();
    }
}

// A slot of RunSums that holds nothing is at the engine's kNoSlot, the address of a tap a held texture lookup did
// not reach (HeldTexels).

// A thread's run of gradients (over the pixels it takes), summed in variables per slot while the slot's address
// stays the same, and added into `grad` by float atomics, one a float, when it moves on and at the end (finish).
// Float c of the group at address `at` lies at at + offset[c] (c by default: the W floats side by side). Slots are
// what a pixel scatters to: its triangle's three vertices, a texture lookup's taps. A float atomic is a
// compare-and-swap on lavapipe, and neighbouring pixels mostly see the same vertices and read the same texels.
template <int S, int W>
class RunSums {
public:
    explicit RunSums(const BufferFloat& grad) : grad_(grad) {
        for (int c = 0; c < W; ++c) offset_[c] = uint32_t(c);
        clear();
    }
    RunSums(const BufferFloat& grad, const std::array<UInt, W>& offset) : grad_(grad) {
        for (int c = 0; c < W; ++c) offset_[c] = offset[c];
        clear();
    }
    // Adds g to slot k's sum, first adding that sum where it belongs if the slot held another address.
    void add(int k, const UInt& at, const Chan<W>& g) {
        $if (at != at_[k]) {
            flush(k);
            at_[k] = at;
            sum_[k] = g;
        }
        $else { sum_[k] = sum_[k] + g; };
    }
    void finish() {
        for (int k = 0; k < S; ++k) flush(k);
    }

private:
    void clear() {
        for (int k = 0; k < S; ++k) {
            at_[k] = kNoSlot;
            sum_[k] = spread<W>(0.0f);
        }
    }
    // A sum of zeros adds nothing (nearest filtering's three unweighted taps, a zero boundary's taps outside).
    void flush(int k) {
        $if ((at_[k] != kNoSlot) & (sum_channels<W>(abs(sum_[k])) != 0.0f)) {
            for (int c = 0; c < W; ++c) grad_.atomic(at_[k] + offset_[c]).fetch_add(channel<W>(sum_[k], c));
        };
    }
    const BufferFloat& grad_;
    UInt offset_[W];
    UInt at_[S];
    Chan<W> sum_[S];
};

} // namespace adjoint::python
