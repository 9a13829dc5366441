// Texture sets on the host: the layout and level table, copies, and the commands that run the mip kernels
// (runtime/texture_kernels.h), compiled once per texture set on first use.
#include <adjoint/runtime/texture.h>

#include "runtime/texture_kernels.h"

#include <algorithm>
#include <limits>
#include <string>

namespace adjoint {

uint64_t texture_set_floats(const std::vector<TextureDesc>& textures, uint32_t channels) {
    uint64_t floats = 0;
    for (const TextureDesc& d : textures) {
        floats = detail::chain_start(floats);
        detail::for_each_level(d, [&](uint32_t w, uint32_t h) { floats += uint64_t(w) * h * channels; });
    }
    return detail::chain_start(floats);   // whole float4s, as the mip kernels see them
}

} // namespace adjoint

namespace adjoint::detail {

namespace {

// Runs commands in order, as one.
Command sequence(std::shared_ptr<const std::vector<Command>> commands) {
    return Command([commands](StreamImpl& s) {
        for (const auto& c : *commands) c(s);
    });
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
        if (uint32_t(d.options.wrap) > uint32_t(TextureWrap::RepeatClamp))
            fail("create_texture: ", kind_, " with an unknown wrap mode ", uint32_t(d.options.wrap));
        std::vector<TextureLevel> chain;
        floats = chain_start(floats);
        for_each_level(d, [&](uint32_t w, uint32_t h) {
            chain.push_back({uint32_t(std::min<uint64_t>(floats, ~0u)), w, h});
            floats += uint64_t(w) * h * channels_;
        });
        table[1 + i] = uint4(uint32_t(table.size()), uint32_t(chain.size()), uint32_t(d.options.wrap), 0);
        for (const auto& l : chain) table.push_back(uint4(l.offset, l.width, l.height, 0));
        levels_.push_back(std::move(chain));
    }
    floats = chain_start(floats);   // whole float4s, as the mip kernels see them
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
    return src.copy_to(texels_.value, offset, l.offset, count);
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
        uint32_t levels = 1;
        for (const auto& chain : levels_) levels = std::max(levels, uint32_t(chain.size()));
        kernels_ = compile_texture_kernels(device_, channels_, levels);
    }
    return *kernels_;
}

// The mip commands of build_mips() and backward_mips() are made once: their arguments never change.
Command TextureStorage::build_mips() const {
    const Kernels& k = kernels();
    std::lock_guard lock(mutex_);
    if (!build_) {
        auto list = std::make_shared<std::vector<Command>>();
        for (uint32_t t = 0; t < levels_.size(); ++t) append_levels(*list, k, t, 1);
        build_ = std::make_shared<const Command>(sequence(std::move(list)));
    }
    return *build_;
}

// Levels `from`.. of a texture from the level below each: one dispatch per level up to the tail, the last
// levels of at most kTailFloats floats (two or more) in one.
void TextureStorage::append_levels(std::vector<Command>& list, const Kernels& k, uint32_t texture,
                                   size_t from) const {
    const auto& chain = levels_[texture];
    from = std::max<size_t>(from, 1);
    size_t tail = chain.size();
    for (uint64_t floats = 0; tail > from; --tail) {
        floats += uint64_t(chain[tail - 1].width) * chain[tail - 1].height * channels_;
        if (floats > kTailFloats) break;
    }
    if (chain.size() - tail < 2) tail = chain.size();
    for (size_t l = from; l < tail; ++l) {
        const TextureLevel &s = chain[l - 1], &d = chain[l];
        list.push_back(k.downsample(texels_, s.offset, s.width, s.height, d.offset).dispatch(d.width, d.height));
    }
    if (tail == chain.size()) return;
    const TextureLevel& s = chain[tail - 1];
    list.push_back(k.mip_tail(texels_, s.offset, s.width, s.height, chain[tail].offset, uint32_t(chain.size() - tail))
                       .dispatch(kTailBlock, kTailBlock));
}

// Level 0 of even width and height has its gradient gathered by one thread per texel of level 1.
static bool even_base(const std::vector<TextureLevel>& chain) {
    return chain.size() > 1 && chain[0].width % 2 == 0 && chain[0].height % 2 == 0;
}

// Level 0 with rows of whole float4s in the texels and in `other` from float `at` (a parameter buffer: levels 1 and
// 2 built with its copy, its gradient put there, a float4 at a time, one thread per texel of level 2): width and
// height multiples of 4, and `other` seen as float4s.
static bool aligned_base(const std::vector<TextureLevel>& chain, size_t other_size, size_t at) {
    return chain.size() > 2 && chain[0].width % 4 == 0 && chain[0].height % 4 == 0 && chain[0].offset % 4 == 0 &&
           at % 4 == 0 && other_size % 4 == 0;
}

Command TextureStorage::mip_gradient(const Kernels& k, uint32_t texture, const Buffer<float>& dst, uint32_t dst_at,
                                     bool add) const {
    const auto& chain = levels_[texture];
    const TextureLevel &l0 = chain[0], &l1 = chain[std::min<size_t>(1, chain.size() - 1)];
    const uint32_t levels = uint32_t(chain.size());
    if (aligned_base(chain, dst.size(), dst_at))
        return k.aligned_mip_gradient(texels_.grad, texels_.grad.as<float4>(), l0.offset / 4, levels, dst.as<float4>(),
                                      dst_at / 4, uint32_t(add))
            .dispatch(chain[2].width, chain[2].height);
    if (even_base(chain))
        return k.even_mip_gradient(texels_.grad, l0.offset, levels, dst, dst_at, uint32_t(add))
            .dispatch(l1.width, l1.height);
    return k.mip_gradient(texels_.grad, l0.offset, levels, dst, dst_at, uint32_t(add)).dispatch(l0.width, l0.height);
}

Command TextureStorage::backward_mips() const {
    const Kernels& k = kernels();
    std::lock_guard lock(mutex_);
    if (!backward_) {
        // Each level 0 gathered into a buffer of its own, then copied back: a kernel that read the chain and wrote
        // level 0 through two bindings of one buffer would be wrong on a GPU, whose compiler may take two storage
        // buffers for distinct (SPIR-V's default without Aliased; on an H200 some texels came out wrong).
        size_t most = 0;
        for (const auto& chain : levels_) most = std::max(most, size_t(chain[0].width) * chain[0].height * channels_);
        Device device = device_;   // a handle: create_buffer is not const
        // Whole float4s, so that the aligned kernel may put level 0 there.
        Buffer<float> gathered = device.create_buffer<float>(chain_start(most));   // the commands keep it
        auto list = std::make_shared<std::vector<Command>>();
        for (uint32_t t = 0; t < levels_.size(); ++t) {
            const TextureLevel& l0 = levels_[t][0];
            if (levels_[t].size() == 1) continue;
            list->push_back(mip_gradient(k, t, gathered, 0, false));
            list->push_back(gathered.copy_to(texels_.grad, 0, l0.offset, size_t(l0.width) * l0.height * channels_));
        }
        backward_ = std::make_shared<const Command>(sequence(std::move(list)));
    }
    return *backward_;
}

Command TextureStorage::build_mips_from(uint32_t texture, const Buffer<float>& src, size_t offset) const {
    const TextureLevel& l = level(texture, 0, "build_mips_from");
    size_t count = size_t(l.width) * l.height * channels_;
    if (offset > src.size() || count > src.size() - offset)
        fail(kind_, "::build_mips_from: floats [", offset, ", ", offset + count, ") of a buffer of ", src.size());
    const Kernels& k = kernels();
    const auto& chain = levels_[texture];
    auto list = std::make_shared<std::vector<Command>>();
    if (aligned_base(chain, src.size(), offset)) {   // levels 1 and 2 with level 0's copy, by float4s
        list->push_back(k.aligned_base_and_levels12(src.as<float4>(), uint32_t(offset / 4), texels_.value.as<float4>(),
                                                    texels_, l.offset / 4, l.width, chain[1].offset, chain[2].offset)
                            .dispatch(chain[2].width, chain[2].height));
        append_levels(*list, k, texture, 3);
    } else if (even_base(chain)) {
        list->push_back(k.even_base_and_level1(src, uint32_t(offset), texels_, l.offset, l.width, chain[1].offset)
                            .dispatch(chain[1].width, chain[1].height));
        append_levels(*list, k, texture, 2);
    } else {
        list->push_back(src.copy_to(texels_.value, offset, l.offset, count));
        append_levels(*list, k, texture, 1);
    }
    return sequence(std::move(list));
}

Command TextureStorage::backward_mips_to(uint32_t texture, const Buffer<float>& dst, size_t offset) const {
    const TextureLevel& l = level(texture, 0, "backward_mips_to");
    size_t count = size_t(l.width) * l.height * channels_;
    if (offset > dst.size() || count > dst.size() - offset)
        fail(kind_, "::backward_mips_to: floats [", offset, ", ", offset + count, ") of a buffer of ", dst.size());
    return mip_gradient(kernels(), texture, dst, uint32_t(offset), true);
}

} // namespace adjoint::detail
