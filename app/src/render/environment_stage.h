// The environment stage: an environment map's prefiltered maps for the split sum (plugins.h, "environment
// maps"), and the reverse, their gradients into the map's, both by one DSL kernel under $autodiff.
#pragma once
#include "scene_data.h"

#include <memory>

namespace adjoint::app {

class EnvironmentStage {
public:
    // Nothing to do (and nothing compiled) for a scene without an environment map.
    EnvironmentStage(Device& device, const SceneData& scene);
    EnvironmentStage(EnvironmentStage&&) noexcept;
    ~EnvironmentStage();
    // Every prefiltered map from its environment map's current texels (after the map's mip chain is built):
    // the first time all, then those of maps that are free parameters.
    void forward(Stream& stream, const SceneData& scene) const;
    // What the shading scattered into the prefiltered maps' gradients, carried into the gradients of the
    // map's level it was filtered from (the map's mip-chain backward then takes it to level 0).
    void backward(Stream& stream, const SceneData& scene) const;

    // A prefiltered map: which one (environment_roughness index, or environment_roughness.size() for the
    // irradiance), its texture and size, the map it comes from and the level of it that is filtered.
    struct Level {
        uint32_t index, texture, width, height;
        uint32_t map, source_level, source_width, source_height;
        uint32_t sub;      // samples per source texel along each axis (> 1 for a map narrower than the level wants)
        uint32_t offset;   // its floats in the scratch buffers
        bool varies;       // its map is a free parameter: filtered every time, and differentiated
    };
    const std::vector<Level>& levels() const { return levels_; }

private:
    struct Kernels;
    std::unique_ptr<Kernels> k_;
    std::vector<Level> levels_;
    Buffer<float> values_, grads_;
    mutable bool done_ = false;   // every map filtered once
};

} // namespace adjoint::app
