// Texture sets on the host: the layout and level table, copies, and the mip kernels (a 2x2 box filter, and
// for the gradients its reverse by $autodiff), compiled once per texture set on first use.
#include <adjoint/runtime/texture.h>

#include <adjoint/dsl/autodiff.h>

#include <algorithm>
#include <limits>
#include <string>

namespace adjoint::detail {

namespace {

// The mean of the 2x2 texels of level (src, sw, sh) under texel (x, y) of the next level; at an odd size the
// last row or column is left out, a size of 1 repeats its texel.
template <typename T, typename B>
Expr<T> box(const B& texels, const UInt& src, const UInt& sw, const UInt& sh, const UInt& x, const UInt& y) {
    std::source_location loc = std::source_location::current();
    UInt x0 = min(2u * x, sw - 1u), x1 = min(2u * x + 1u, sw - 1u);
    UInt y0 = min(2u * y, sh - 1u), y1 = min(2u * y + 1u, sh - 1u);
    auto at = [&](const UInt& xx, const UInt& yy) {
        return read_texel<T>(texels, src + (yy * sw + xx) * texel_channels<T>, loc);
    };
    return (at(x0, y0) + at(x1, y0) + at(x0, y1) + at(x1, y1)) * 0.25f;
}

template <typename T>
void write_texel(const BufferFloat& buf, const UInt& at, const Expr<T>& v) {
    if constexpr (std::is_same_v<T, float>) {
        buf.write(at, v);
    } else {
        buf.write(at, v.x);
        buf.write(at + 1u, v.y);
        if constexpr (texel_channels<T> > 2) buf.write(at + 2u, v.z);
        if constexpr (texel_channels<T> > 3) buf.write(at + 3u, v.w);
    }
}

// Level dst (dw wide) from level src below it, one thread per texel of dst.
template <typename T>
const auto& downsample_kernel() {
    static const Kernel1D k = [](BufferFloat texels, UInt src, UInt sw, UInt sh, UInt dst, UInt dw) noexcept {
        UInt i = dispatch_id().x;
        write_texel<T>(texels, dst + i * texel_channels<T>, box<T>(texels, src, sw, sh, i % dw, i / dw));
    };
    return k;
}

// The reverse: each texel of dst seeds the box filter that made it, whose differentiable reads add into the
// gradient of level src.
template <typename T>
const auto& downsample_backward_kernel() {
    static const Kernel1D k = [](DiffBufferFloat texels, BufferFloat grad, UInt src, UInt sw, UInt sh, UInt dst,
                                 UInt dw) noexcept {
        UInt i = dispatch_id().x;
        Var<T> seed = read_texel<T>(grad, dst + i * texel_channels<T>, std::source_location::current());
        $autodiff {
            Var<T> c = box<T>(texels, src, sw, sh, i % dw, i / dw);
            backward(c, seed);
        };
    };
    return k;
}

const auto& copy_kernel() {
    static const Kernel1D k = [](BufferFloat from, BufferFloat to, UInt from_at, UInt to_at) noexcept {
        UInt i = dispatch_id().x;
        to.write(to_at + i, from.read(from_at + i));
    };
    return k;
}

const auto& add_kernel() {
    static const Kernel1D k = [](BufferFloat from, BufferFloat to, UInt from_at, UInt to_at) noexcept {
        UInt i = dispatch_id().x;
        to.write(to_at + i, to.read(to_at + i) + from.read(from_at + i));
    };
    return k;
}

// Runs commands in order, as one.
Command sequence(std::shared_ptr<const std::vector<Command>> commands) {
    return Command([commands](StreamImpl& s) {
        for (const auto& c : *commands) c(s);
    });
}

} // namespace

struct TextureStorage::Kernels {
    Shader<1> copy, add, downsample, downsample_backward;
};

namespace {
template <typename T>
std::shared_ptr<const TextureStorage::Kernels> compile_kernels(Device& d) {
    const std::string t = std::to_string(texel_channels<T>);
    return std::make_shared<const TextureStorage::Kernels>(TextureStorage::Kernels{
        d.compile(copy_kernel(), {.name = "texture_copy_base"}),
        d.compile(add_kernel(), {.name = "texture_add_base_grad"}),
        d.compile(downsample_kernel<T>(), {.name = "texture_mip_downsample_" + t}),
        d.compile(downsample_backward_kernel<T>(), {.name = "texture_mip_backward_" + t})});
}
} // namespace

TextureStorage::TextureStorage(Device device, uint32_t channels, std::vector<TextureDesc> textures, std::string kind)
    : device_(std::move(device)), channels_(channels), kind_(std::move(kind)), descs_(std::move(textures)) {
    if (descs_.empty()) fail("create_texture_set: a ", kind_, " needs at least one texture");
    // The table: a header, one record per texture, then one per level (dsl/texture.h has the layout).
    std::vector<uint4> table(1 + descs_.size());
    table[0] = uint4(uint32_t(descs_.size()), 0, 0, 0);
    uint64_t floats = 0;
    for (size_t i = 0; i < descs_.size(); ++i) {
        const TextureDesc& d = descs_[i];
        if (d.width == 0 || d.height == 0)
            fail("create_texture: ", kind_, descs_.size() > 1 ? " texture " + std::to_string(i) : std::string(),
                 " of ", d.width, " x ", d.height, " texels; width and height must be at least 1");
        if (uint32_t(d.options.wrap) > uint32_t(TextureWrap::Mirror))
            fail("create_texture: ", kind_, " with an unknown wrap mode ", uint32_t(d.options.wrap));
        std::vector<TextureLevel> chain;
        uint32_t w = d.width, h = d.height;
        for (;;) {
            chain.push_back({uint32_t(std::min<uint64_t>(floats, ~0u)), w, h});
            floats += uint64_t(w) * h * channels_;
            if (!d.options.mipmaps || (w == 1 && h == 1)) break;
            w = std::max(1u, w / 2);
            h = std::max(1u, h / 2);
        }
        table[1 + i] = uint4(uint32_t(table.size()), uint32_t(chain.size()), uint32_t(d.options.wrap), 0);
        for (const auto& l : chain) table.push_back(uint4(l.offset, l.width, l.height, 0));
        levels_.push_back(std::move(chain));
    }
    if (floats > std::numeric_limits<uint32_t>::max())
        fail("create_texture: ", kind_, " of ", floats, " floats with its mip levels; at most 2^32 - 1 fit");
    texels_ = device_.create_diff_buffer<float>(size_t(floats));
    table_ = device_.create_buffer<uint4>(table.size());
    Stream stream = device_.create_stream();
    stream << table_.copy_from(table.data()) << texels_.value.fill_zero() << texels_.zero_grad() << synchronize();
}

TextureStorage::~TextureStorage() = default;

const TextureStorage& texture_storage(const std::shared_ptr<TextureStorage>& s) {
    if (!s) fail("an empty texture (default-constructed or moved-from) was used");
    return *s;
}

const TextureDesc& TextureStorage::desc(uint32_t texture) const {
    if (texture >= descs_.size()) fail(kind_, ": texture ", texture, " of ", descs_.size());
    return descs_[texture];
}

uint32_t TextureStorage::levels(uint32_t texture) const {
    desc(texture);
    return uint32_t(levels_[texture].size());
}

const TextureLevel& TextureStorage::level(uint32_t texture, uint32_t l, const char* what) const {
    if (texture >= descs_.size()) fail(kind_, "::", what, ": texture ", texture, " of ", descs_.size());
    if (l >= levels_[texture].size())
        fail(kind_, "::", what, ": level ", l, " of ", levels_[texture].size(), " (levels 0 to ",
             levels_[texture].size() - 1, ")");
    return levels_[texture][l];
}

Command TextureStorage::copy_from(uint32_t texture, const float* src) const {
    const TextureLevel& l = level(texture, 0, "copy_from");
    return texels_.value.copy_from(src, l.offset, size_t(l.width) * l.height * channels_);
}

Command TextureStorage::copy_to(uint32_t texture, uint32_t lv, float* dst) const {
    const TextureLevel& l = level(texture, lv, "copy_to");
    return texels_.value.copy_to(dst, l.offset, size_t(l.width) * l.height * channels_);
}

Command TextureStorage::copy_grad_to(uint32_t texture, uint32_t lv, float* dst) const {
    const TextureLevel& l = level(texture, lv, "copy_grad_to");
    return texels_.grad.copy_to(dst, l.offset, size_t(l.width) * l.height * channels_);
}

Command TextureStorage::copy_base_from(uint32_t texture, const Buffer<float>& src, size_t offset) const {
    const TextureLevel& l = level(texture, 0, "copy_base_from");
    size_t count = size_t(l.width) * l.height * channels_;
    if (offset > src.size() || count > src.size() - offset)
        fail(kind_, "::copy_base_from: floats [", offset, ", ", offset + count, ") of a buffer of ", src.size());
    return kernels().copy(src, texels_, offset, l.offset).dispatch(uint32_t(count));
}

Command TextureStorage::add_base_grad_to(uint32_t texture, const Buffer<float>& dst, size_t offset) const {
    const TextureLevel& l = level(texture, 0, "add_base_grad_to");
    size_t count = size_t(l.width) * l.height * channels_;
    if (offset > dst.size() || count > dst.size() - offset)
        fail(kind_, "::add_base_grad_to: floats [", offset, ", ", offset + count, ") of a buffer of ", dst.size());
    return kernels().add(texels_.grad, dst, l.offset, offset).dispatch(uint32_t(count));
}

const TextureStorage::Kernels& TextureStorage::kernels() const {
    std::lock_guard lock(mutex_);
    if (!kernels_) {
        Device d = device_;
        switch (channels_) {
        case 1: kernels_ = compile_kernels<float>(d); break;
        case 2: kernels_ = compile_kernels<float2>(d); break;
        case 3: kernels_ = compile_kernels<float3>(d); break;
        default: kernels_ = compile_kernels<float4>(d); break;
        }
    }
    return *kernels_;
}

// The mip commands are made once: their arguments never change.
Command TextureStorage::build_mips() const {
    const Kernels& k = kernels();
    std::lock_guard lock(mutex_);
    if (!build_) {
        auto list = std::make_shared<std::vector<Command>>();
        for (const auto& chain : levels_)
            for (size_t l = 1; l < chain.size(); ++l) {
                const TextureLevel &s = chain[l - 1], &d = chain[l];
                list->push_back(k.downsample(texels_, s.offset, s.width, s.height, d.offset, d.width)
                                    .dispatch(d.width * d.height));
            }
        build_ = std::make_shared<const Command>(sequence(std::move(list)));
    }
    return *build_;
}

Command TextureStorage::backward_mips() const {
    const Kernels& k = kernels();
    std::lock_guard lock(mutex_);
    if (!backward_) {
        auto list = std::make_shared<std::vector<Command>>();
        for (const auto& chain : levels_)
            for (size_t l = chain.size() - 1; l >= 1; --l) {
                const TextureLevel &s = chain[l - 1], &d = chain[l];
                list->push_back(k.downsample_backward(texels_, texels_.grad, s.offset, s.width, s.height, d.offset,
                                                      d.width)
                                    .dispatch(d.width * d.height));
            }
        backward_ = std::make_shared<const Command>(sequence(std::move(list)));
    }
    return *backward_;
}

} // namespace adjoint::detail
