// The mip kernels of texture sets (runtime/texture_kernels.cpp), as TextureStorage dispatches them.
#pragma once
#include <adjoint/runtime/texture.h>

namespace adjoint::detail {

// The last levels of a chain, at most kTailFloats floats together, are built in one dispatch of one
// kTailBlock x kTailBlock block (the mip_tail kernel).
constexpr uint32_t kTailFloats = 4096, kTailBlock = 8;

struct TextureStorage::Kernels {
    Shader<1> add;
    Shader<2> downsample, even_base_and_level1, aligned_base_and_levels12, mip_gradient, even_mip_gradient,
        aligned_mip_gradient, mip_tail;
};

// The kernels for texels of `channels` floats, the gradient's chains unrolled for `levels` levels.
std::shared_ptr<const TextureStorage::Kernels> compile_texture_kernels(Device device, uint32_t channels,
                                                                     uint32_t levels);

} // namespace adjoint::detail
