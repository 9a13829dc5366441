// Groups of up to four floats in the Python module's kernels (texture channels, interpolate's attributes): their DSL
// type, reads, writes and sums, and how wide a group is.
#pragma once
#include <adjoint/adjoint.h>

#include <algorithm>
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

} // namespace adjoint::python
