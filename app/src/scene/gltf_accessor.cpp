// glTF accessors read into floats and indices, every byte checked against its buffer view and buffer first.
#include "scene/gltf.h"

#include <algorithm>
#include <cstring>

namespace adjoint::app::detail::gltf {

namespace {

// An accessor without a buffer view is zeros (sparse values go on top); its count is all there is to check, so
// it is capped: a tiny file must not ask for gigabytes.
constexpr size_t max_zero_elements = size_t(1) << 24;

size_t component_bytes(int type) {
    switch (type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return 1;
    case TINYGLTF_COMPONENT_TYPE_SHORT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return 2;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return 4;
    default: return 0;   // INT and DOUBLE are not glTF 2.0 accessor types
    }
}

int type_components(int type) {
    switch (type) {
    case TINYGLTF_TYPE_SCALAR: return 1;
    case TINYGLTF_TYPE_VEC2: return 2;
    case TINYGLTF_TYPE_VEC3: return 3;
    case TINYGLTF_TYPE_VEC4: return 4;
    default: return 0;   // matrices: no attribute this loader reads is one
    }
}

template <typename T>
T load(const unsigned char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);   // glTF is little-endian, like every machine Adjoint runs on
    return v;
}

// One component as a float; normalized integers by the glTF specification's formulas (3.11).
float component(const unsigned char* p, int type, bool normalized) {
    switch (type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
        const float v = float(int8_t(*p));
        return normalized ? std::max(v / 127.0f, -1.0f) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return normalized ? float(*p) / 255.0f : float(*p);
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
        const float v = float(load<int16_t>(p));
        return normalized ? std::max(v / 32767.0f, -1.0f) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
        const float v = float(load<uint16_t>(p));
        return normalized ? v / 65535.0f : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: {
        const double v = double(load<uint32_t>(p));
        return float(normalized ? v / 4294967295.0 : v);
    }
    default: return load<float>(p);
    }
}

// An unsigned integer component, exactly (a float holds integers only up to 2^24).
uint32_t unsigned_component(const unsigned char* p, int type) {
    if (type == TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE) return *p;
    if (type == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT) return load<uint16_t>(p);
    return load<uint32_t>(p);
}

} // namespace

const unsigned char* checked_bytes(const tinygltf::Model& model, int view, size_t offset, size_t count,
                                  size_t element, size_t stride, const std::string& what, const Source& source) {
    if (view < 0 || size_t(view) >= model.bufferViews.size())
        source.fail(what + ": buffer view " + std::to_string(view) + " does not exist (the file has " +
                    std::to_string(model.bufferViews.size()) + ")");
    const tinygltf::BufferView& v = model.bufferViews[size_t(view)];
    const std::string name = "buffer view " + std::to_string(view);
    if (v.buffer < 0 || size_t(v.buffer) >= model.buffers.size())
        source.fail(name + ": buffer " + std::to_string(v.buffer) + " does not exist (the file has " +
                    std::to_string(model.buffers.size()) + ")");
    const size_t size = model.buffers[size_t(v.buffer)].data.size();
    if (v.byteOffset > size || v.byteLength > size - v.byteOffset)
        source.fail(name + ": bytes " + std::to_string(v.byteOffset) + " + " + std::to_string(v.byteLength) +
                    " run past its buffer's " + std::to_string(size));
    // The last element's end, without overflow: count ≤ 2^32 and stride ≤ 2^8 in any file that fits.
    const bool fits = offset <= v.byteLength && count <= v.byteLength &&
                      (count == 0 || stride * (count - 1) + element <= v.byteLength - offset);
    if (!fits)
        source.fail(what + ": " + std::to_string(count) + " elements of " + std::to_string(element) + " bytes from byte " +
                    std::to_string(offset) + " run past its buffer view (" + name + ", " +
                    std::to_string(v.byteLength) + " bytes)");
    return model.buffers[size_t(v.buffer)].data.data() + v.byteOffset + offset;
}

namespace {

const tinygltf::Accessor& accessor_at(const tinygltf::Model& model, int index, const std::string& what,
                                      const Source& source) {
    if (index < 0 || size_t(index) >= model.accessors.size())
        source.fail(what + ": accessor " + std::to_string(index) + " does not exist (the file has " +
                    std::to_string(model.accessors.size()) + ")");
    return model.accessors[size_t(index)];
}

} // namespace

Floats read_floats(const tinygltf::Model& model, int index, const std::string& what, Source& source) {
    const tinygltf::Accessor& a = accessor_at(model, index, what, source);
    const std::string name = what + " (accessor " + std::to_string(index) + ")";
    const size_t bytes = component_bytes(a.componentType);
    Floats out;
    out.components = type_components(a.type);
    if (bytes == 0) source.fail(name + ": component type " + std::to_string(a.componentType) + " is not one of glTF's");
    if (out.components == 0) source.fail(name + ": a matrix or unknown type where a scalar or vector belongs");
    if (a.count == 0) source.fail(name + ": count 0 (at least 1)");
    out.count = a.count;
    const size_t element = bytes * size_t(out.components);
    const size_t n = size_t(out.components);
    if (a.bufferView >= 0) {
        const tinygltf::BufferView& view =
            a.bufferView < int(model.bufferViews.size()) ? model.bufferViews[size_t(a.bufferView)] : tinygltf::BufferView{};
        const size_t stride = view.byteStride ? view.byteStride : element;
        if (stride < element)
            source.fail(name + ": its buffer view's byteStride " + std::to_string(stride) +
                        " is less than an element's " + std::to_string(element) + " bytes");
        const unsigned char* p = checked_bytes(model, a.bufferView, a.byteOffset, a.count, element, stride, name, source);
        out.values.resize(a.count * n);
        for (size_t e = 0; e < a.count; ++e)
            for (size_t c = 0; c < n; ++c)
                out.values[e * n + c] = component(p + e * stride + c * bytes, a.componentType, a.normalized);
    } else {
        if (a.count > max_zero_elements)
            source.fail(name + ": " + std::to_string(a.count) + " elements without a buffer view (at most " +
                        std::to_string(max_zero_elements) + ")");
        out.values.assign(a.count * n, 0.0f);
    }
    if (a.sparse.isSparse) {
        const auto& s = a.sparse;
        const std::string sparse = name + " sparse";
        if (s.count < 1 || size_t(s.count) > a.count)
            source.fail(sparse + ": count " + std::to_string(s.count) + " (1 to the accessor's " +
                        std::to_string(a.count) + ")");
        const size_t index_bytes = component_bytes(s.indices.componentType);
        if (index_bytes == 0 || s.indices.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT ||
            s.indices.componentType == TINYGLTF_COMPONENT_TYPE_BYTE || s.indices.componentType == TINYGLTF_COMPONENT_TYPE_SHORT)
            source.fail(sparse + ": indices of component type " + std::to_string(s.indices.componentType) +
                        " (unsigned byte, short or int)");
        if (s.indices.byteOffset < 0 || s.values.byteOffset < 0) source.fail(sparse + ": a negative byteOffset");
        const size_t count = size_t(s.count);
        const unsigned char* indices = checked_bytes(model, s.indices.bufferView, size_t(s.indices.byteOffset), count,
                                                    index_bytes, index_bytes, sparse + " indices", source);
        const unsigned char* values = checked_bytes(model, s.values.bufferView, size_t(s.values.byteOffset), count,
                                                   element, element, sparse + " values", source);
        for (size_t k = 0; k < count; ++k) {
            const size_t i = unsigned_component(indices + k * index_bytes, s.indices.componentType);
            if (i >= a.count)
                source.fail(sparse + ": index " + std::to_string(i) + " is past its " + std::to_string(a.count) +
                            " elements");
            for (size_t c = 0; c < n; ++c)
                out.values[i * n + c] = component(values + k * element + c * bytes, a.componentType, a.normalized);
        }
    }
    return out;
}

std::vector<uint32_t> read_indices(const tinygltf::Model& model, int index, const std::string& what, Source& source) {
    const tinygltf::Accessor& a = accessor_at(model, index, what, source);
    const int t = a.componentType;
    if (a.type != TINYGLTF_TYPE_SCALAR || a.normalized ||
        (t != TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE && t != TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT &&
         t != TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT))
        source.fail(what + " (accessor " + std::to_string(index) +
                    "): indices must be scalars of unsigned byte, short or int, not normalized");
    const Floats f = read_floats(model, index, what, source);
    std::vector<uint32_t> out(f.values.size());
    if (a.bufferView >= 0 && !a.sparse.isSparse) {   // read_floats checked the span
        const tinygltf::BufferView& view = model.bufferViews[size_t(a.bufferView)];
        const size_t bytes = component_bytes(t);
        const size_t stride = view.byteStride ? view.byteStride : bytes;
        const unsigned char* p = model.buffers[size_t(view.buffer)].data.data() + view.byteOffset + a.byteOffset;
        for (size_t e = 0; e < out.size(); ++e) out[e] = unsigned_component(p + e * stride, t);
    } else {
        for (size_t e = 0; e < out.size(); ++e) out[e] = uint32_t(f.values[e]);
    }
    return out;
}

} // namespace adjoint::app::detail::gltf
