// Textures on the host: 2D textures whose mip chains live in one differentiable buffer. Level 0 comes from
// the host or from a range of another buffer; build_mips() makes the other levels on the device, and
// backward_mips() sends every level's gradient back down to level 0 (kernels: dsl/texture.h).
#pragma once
#include <adjoint/dsl/texture.h>
#include <adjoint/runtime/device.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace adjoint {

struct TextureOptions {
    TextureWrap wrap = TextureWrap::Repeat;
    bool mipmaps = true;   // false: level 0 only
};

// One texture of a TextureSet.
struct TextureDesc {
    uint32_t width = 0, height = 0;
    TextureOptions options{};
};

// The floats a texture set of these textures holds, every level of every chain (`channels` a texel): its texel
// buffer's size, which one kernel argument must cover (Device::max_buffer_bytes()), known before it is made.
uint64_t texture_set_floats(const std::vector<TextureDesc>& textures, uint32_t channels);

namespace detail {

// Calls level(width, height) for each level of a texture's chain: level 0, then halving (at least 1) down to
// 1 x 1, or level 0 only without mipmaps.
template <typename F>
void for_each_level(const TextureDesc& d, F&& level) {
    uint32_t w = d.width, h = d.height;
    for (;;) {
        level(w, h);
        if (!d.options.mipmaps || (w == 1 && h == 1)) break;
        w = std::max(1u, w / 2);
        h = std::max(1u, h / 2);
    }
}

// Where a texture's chain starts in the set's texels, the floats before it being `used`: on a whole float4, so
// that a level 0 whose rows are whole float4s (a width that is a multiple of 4) is read and written as float4s
// by the mip kernels (lavapipe accesses memory lane by lane, a float4 for about the cost of a float).
inline uint64_t chain_start(uint64_t used) { return (used + 3) / 4 * 4; }

struct TextureLevel {
    uint32_t offset = 0;   // of its first float in the texels
    uint32_t width = 0, height = 0;
};

// The untyped texture set behind TextureSet<T> and Texture2D<T>; `kind` names it in errors.
class TextureStorage {
public:
    TextureStorage(Device device, uint32_t channels, std::vector<TextureDesc> textures, std::string kind);
    ~TextureStorage();

    uint32_t channels() const { return channels_; }
    size_t size() const { return levels_.size(); }
    const TextureDesc& desc(uint32_t texture) const;
    // Level `level` of `texture`; an Error names `what` when either is out of range.
    const TextureLevel& level(uint32_t texture, uint32_t level, const char* what) const;
    uint32_t levels(uint32_t texture) const;
    const DiffBuffer<float>& texels() const { return texels_; }
    const Buffer<uint4>& table() const { return table_; }

    Command copy_from(uint32_t texture, const float* src) const;
    Command copy_to(uint32_t texture, uint32_t level, float* dst) const;
    Command copy_grad_to(uint32_t texture, uint32_t level, float* dst) const;
    Command copy_base_from(uint32_t texture, const Buffer<float>& src, size_t offset) const;
    Command add_base_grad_to(uint32_t texture, const Buffer<float>& dst, size_t offset) const;
    Command build_mips() const;
    Command backward_mips() const;
    Command build_mips_from(uint32_t texture, const Buffer<float>& src, size_t offset) const;
    Command backward_mips_to(uint32_t texture, const Buffer<float>& dst, size_t offset) const;

    struct Kernels;

private:
    const Kernels& kernels() const;   // compiled on first use
    void append_levels(std::vector<Command>& list, const Kernels& k, uint32_t texture, size_t from) const;
    Command mip_gradient(const Kernels& k, uint32_t texture, const Buffer<float>& dst, uint32_t dst_at, bool add) const;

    Device device_;
    uint32_t channels_;
    std::string kind_;
    std::vector<TextureDesc> descs_;
    std::vector<std::vector<TextureLevel>> levels_;
    DiffBuffer<float> texels_;
    Buffer<uint4> table_;
    mutable std::mutex mutex_;
    mutable std::shared_ptr<const Kernels> kernels_;
    mutable std::shared_ptr<const Command> build_, backward_;
};

// The storage of a texture handle; an Error when the handle is empty.
const TextureStorage& texture_storage(const std::shared_ptr<TextureStorage>& s);

} // namespace detail

// Several 2D textures of any sizes (each with its own wrap mode and mip chain) with texels of type T (float,
// float2, float3 or float4), in one differentiable buffer; a TextureSetVar<T> kernel parameter picks one by
// index. Texels are `channels` floats each, tightly packed (a float3 texel is 3 floats), rows of `width`
// texels, row 0 first; each texture's chain starts on a whole float4, and the set ends on one (up to 3 unused
// floats before each chain and at the end). Level l is max(1, width >> l) x max(1, height >> l); the chain ends
// at 1 x 1.
// Commands read and write device memory when the stream runs them, like a Buffer's.
template <typename T>
class TextureSet {
public:
    static constexpr uint32_t channels = detail::texel_channels<T>;
    TextureSet() = default;   // empty: passing it to a kernel or using it is an Error
    explicit TextureSet(std::shared_ptr<detail::TextureStorage> s) : s_(std::move(s)) {}

    size_t size() const { return s_ ? s_->size() : 0; }
    uint32_t width(uint32_t texture, uint32_t level = 0) const { return get().level(texture, level, "width").width; }
    uint32_t height(uint32_t texture, uint32_t level = 0) const { return get().level(texture, level, "height").height; }
    uint32_t levels(uint32_t texture) const { return get().levels(texture); }
    TextureWrap wrap(uint32_t texture) const { return get().desc(texture).options.wrap; }

    // Level 0 of `texture` from the host: width * height * channels floats.
    Command copy_from(uint32_t texture, const float* src) const { return get().copy_from(texture, src); }
    // A level's values or gradient to the host (written by the next synchronize()).
    Command copy_to(uint32_t texture, float* dst, uint32_t level = 0) const {
        return get().copy_to(texture, level, dst);
    }
    Command copy_grad_to(uint32_t texture, float* dst, uint32_t level = 0) const {
        return get().copy_grad_to(texture, level, dst);
    }
    // Level 0 of `texture` from floats [offset, offset + width * height * channels) of a device buffer, and its
    // gradient added into the same range of another (for textures that are ranges of a parameter buffer).
    Command copy_base_from(uint32_t texture, const Buffer<float>& src, size_t offset) const {
        return get().copy_base_from(texture, src, offset);
    }
    Command add_base_grad_to(uint32_t texture, const Buffer<float>& dst, size_t offset) const {
        return get().add_base_grad_to(texture, dst, offset);
    }
    // Levels 1.. of every texture from level 0: each texel the mean of the 2x2 texels below it (at an odd
    // size the last row or column is left out; a size of 1 repeats its texel).
    Command build_mips() const { return get().build_mips(); }
    // Level 0's gradient becomes the whole gradient with respect to level 0: its own plus, through the reverse
    // of build_mips' box filter, every level's above it (coarsest first, each level's own plus a quarter of
    // the one above it). The other levels keep theirs. One dispatch per texture.
    Command backward_mips() const { return get().backward_mips(); }
    // For a texture that is a range of a parameter buffer, what copy_base_from(src, offset) + build_mips()
    // make for it, in one dispatch fewer (level 0 is copied while level 1 is built, and level 2 where level 0's
    // width and height are multiples of 4).
    Command build_mips_from(uint32_t texture, const Buffer<float>& src, size_t offset) const {
        return get().build_mips_from(texture, src, offset);
    }
    // Adds the whole gradient with respect to level 0 (what backward_mips() leaves there) into floats
    // [offset, offset + width * height * channels) of dst, in one dispatch; the texture's gradients are left
    // as they are. The same as backward_mips() + add_base_grad_to(dst, offset), without their other dispatches.
    Command backward_mips_to(uint32_t texture, const Buffer<float>& dst, size_t offset) const {
        return get().backward_mips_to(texture, dst, offset);
    }
    Command zero_grad() const { return get().texels().zero_grad(); }

    const DiffBuffer<float>& texels() const { return get().texels(); }
    const Buffer<uint4>& table() const { return get().table(); }
    const std::shared_ptr<detail::TextureStorage>& storage() const { return s_; }

private:
    const detail::TextureStorage& get() const { return detail::texture_storage(s_); }
    std::shared_ptr<detail::TextureStorage> s_;
};

// One 2D texture with texels of type T (see TextureSet for the layout and the commands); a TextureVar<T>
// kernel parameter samples it.
template <typename T>
class Texture2D {
public:
    static constexpr uint32_t channels = detail::texel_channels<T>;
    Texture2D() = default;
    explicit Texture2D(std::shared_ptr<detail::TextureStorage> s) : set_(std::move(s)) {}

    uint32_t width(uint32_t level = 0) const { return set_.width(0, level); }
    uint32_t height(uint32_t level = 0) const { return set_.height(0, level); }
    uint32_t levels() const { return set_.levels(0); }
    TextureWrap wrap() const { return set_.wrap(0); }
    Command copy_from(const float* src) const { return set_.copy_from(0, src); }
    Command copy_to(float* dst, uint32_t level = 0) const { return set_.copy_to(0, dst, level); }
    Command copy_grad_to(float* dst, uint32_t level = 0) const { return set_.copy_grad_to(0, dst, level); }
    Command copy_base_from(const Buffer<float>& src, size_t offset) const {
        return set_.copy_base_from(0, src, offset);
    }
    Command add_base_grad_to(const Buffer<float>& dst, size_t offset) const {
        return set_.add_base_grad_to(0, dst, offset);
    }
    Command build_mips() const { return set_.build_mips(); }
    Command backward_mips() const { return set_.backward_mips(); }
    Command build_mips_from(const Buffer<float>& src, size_t offset) const {
        return set_.build_mips_from(0, src, offset);
    }
    Command backward_mips_to(const Buffer<float>& dst, size_t offset) const {
        return set_.backward_mips_to(0, dst, offset);
    }
    Command zero_grad() const { return set_.zero_grad(); }
    const DiffBuffer<float>& texels() const { return set_.texels(); }
    const Buffer<uint4>& table() const { return set_.table(); }
    const std::shared_ptr<detail::TextureStorage>& storage() const { return set_.storage(); }

private:
    TextureSet<T> set_;
};

namespace detail {
template <typename T>
DispatchArg texture_dispatch_arg(const std::shared_ptr<TextureStorage>& s, const char* kind) {
    DispatchArg a{DispatchArg::Kind::Buffer, nullptr, nullptr, nullptr, {}, 0, false, nullptr};
    a.bundle = kind;
    if (s) a.parts = {to_dispatch_arg(s->texels()), to_dispatch_arg(s->table())};
    else a.parts = {to_dispatch_arg(DiffBuffer<float>{}), to_dispatch_arg(Buffer<uint4>{})};
    return a;
}
} // namespace detail

template <typename T>
DispatchArg to_dispatch_arg(const TextureSet<T>& t) {
    return detail::texture_dispatch_arg<T>(t.storage(), detail::texture_set_kind<T>);
}
template <typename T>
DispatchArg to_dispatch_arg(const Texture2D<T>& t) {
    return detail::texture_dispatch_arg<T>(t.storage(), detail::texture_kind<T>);
}

template <typename T>
Texture2D<T> Device::create_texture(uint32_t width, uint32_t height, const TextureOptions& options) {
    static_assert(detail::is_texel_v<T>, "a texture holds float, float2, float3 or float4 texels");
    return Texture2D<T>(std::make_shared<detail::TextureStorage>(*this, detail::texel_channels<T>,
                                                                std::vector<TextureDesc>{{width, height, options}},
                                                                detail::texture_kind<T>));
}
template <typename T>
Texture2D<T> Device::create_texture(uint32_t width, uint32_t height) {
    return create_texture<T>(width, height, TextureOptions{});
}
template <typename T>
TextureSet<T> Device::create_texture_set(const std::vector<TextureDesc>& textures) {
    static_assert(detail::is_texel_v<T>, "a texture holds float, float2, float3 or float4 texels");
    return TextureSet<T>(std::make_shared<detail::TextureStorage>(*this, detail::texel_channels<T>, textures,
                                                                 detail::texture_set_kind<T>));
}

} // namespace adjoint
