// IR types: scalars, vectors, matrices, arrays and structs, interned so that equal types are equal pointers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace adjoint::ir {

// UInt64 is a scalar only (no vectors): 8 bytes, two 32-bit lanes (low word first, as in memory).
enum class ScalarKind : uint8_t { Bool, Int, UInt, Float, UInt64 };

class Type {
public:
    enum class Kind : uint8_t { Void, Scalar, Vector, Matrix, Array, Struct, Buffer, Image };

    static const Type* void_type();
    static const Type* scalar(ScalarKind s);
    static const Type* vector(ScalarKind s, uint32_t n);     // n == 1 gives the scalar; no uint64 vectors
    static const Type* matrix(uint32_t n);                   // float nxn, column-major
    static const Type* array(const Type* element, uint32_t n);
    // A struct with members in C++ order; offsets/size/align are the C++ (host) layout, which the GLSL
    // side reproduces with padding so that buffers of structs copy byte for byte.
    static const Type* structure(std::string name, std::vector<const Type*> members,
                                 std::vector<std::string> member_names, std::vector<uint32_t> offsets,
                                 uint32_t size, uint32_t align);
    static const Type* buffer(const Type* element);
    // A buffer paired with a gradient buffer (DiffBufferVar): a Buffer kind with dim 1, so buffer code
    // applies to it; autodiff makes its reads active and scatters their adjoints to the gradient buffer.
    static const Type* diff_buffer(const Type* element);
    static const Type* image();                              // 2D RGBA32F storage image

    static const Type* f32() { return scalar(ScalarKind::Float); }
    static const Type* i32() { return scalar(ScalarKind::Int); }
    static const Type* u32() { return scalar(ScalarKind::UInt); }
    static const Type* boolean() { return scalar(ScalarKind::Bool); }
    static const Type* u64() { return scalar(ScalarKind::UInt64); }

    Kind kind() const { return kind_; }
    ScalarKind scalar_kind() const { return scalar_; }       // of the scalar/vector/matrix components
    uint32_t dim() const { return dim_; }                    // vector/matrix n, array length
    const Type* element() const { return element_; }         // array/buffer element; matrix column; vector scalar
    const std::string& name() const { return name_; }
    const std::vector<const Type*>& members() const { return members_; }
    const std::vector<std::string>& member_names() const { return member_names_; }
    const std::vector<uint32_t>& member_offsets() const { return offsets_; }

    bool is_void() const { return kind_ == Kind::Void; }
    bool is_scalar() const { return kind_ == Kind::Scalar; }
    bool is_vector() const { return kind_ == Kind::Vector; }
    bool is_matrix() const { return kind_ == Kind::Matrix; }
    bool is_array() const { return kind_ == Kind::Array; }
    bool is_struct() const { return kind_ == Kind::Struct; }
    bool is_resource() const { return kind_ == Kind::Buffer || kind_ == Kind::Image; }
    bool is_diff_buffer() const { return kind_ == Kind::Buffer && dim_ == 1; }
    bool is_value() const { return !is_void() && !is_resource(); }
    // Scalar, vector or matrix: an "arithmetic" type whose components are one scalar kind.
    bool is_basic() const { return is_scalar() || is_vector() || is_matrix(); }
    bool is_float() const { return is_basic() && scalar_ == ScalarKind::Float; }
    bool is_int_like() const {
        return is_basic() && (scalar_ == ScalarKind::Int || scalar_ == ScalarKind::UInt || scalar_ == ScalarKind::UInt64);
    }
    // An int or uint scalar: what indexes arrays, buffers and shared memory, and what a switch takes.
    bool is_index() const { return is_scalar() && (scalar_ == ScalarKind::Int || scalar_ == ScalarKind::UInt); }
    bool is_u64() const { return is_scalar() && scalar_ == ScalarKind::UInt64; }
    bool is_bool() const { return is_basic() && scalar_ == ScalarKind::Bool; }
    // Holds at least one float component anywhere (what autodiff can carry a gradient through).
    bool has_float() const;
    // Number of 32-bit components when flattened (vectors, matrices, arrays, structs; a uint64 takes two).
    uint32_t lanes() const { return lanes_; }
    // Scalar kind of flattened lane i.
    ScalarKind lane_kind(uint32_t i) const;
    // Host (C++) byte offset of flattened lane i, and host size/alignment (float3 takes 16 bytes).
    uint32_t lane_offset(uint32_t i) const;
    uint32_t host_size() const { return size_; }
    uint32_t host_align() const { return align_; }
    // Same shape with every component of scalar kind s (bool vector of a float vector, say).
    const Type* with_scalar(ScalarKind s) const;
    // "float", "float3", "float4x4", "array<float,4>", "Particle", "buffer<float>", "diff_buffer<float>".
    std::string to_string() const;

    Type(Kind k) : kind_(k) {}   // use the factories; public for the interning table
    Kind kind_;
    ScalarKind scalar_ = ScalarKind::Float;
    uint32_t dim_ = 0;
    const Type* element_ = nullptr;
    std::string name_;
    std::vector<const Type*> members_;
    std::vector<std::string> member_names_;
    std::vector<uint32_t> offsets_;
    uint32_t size_ = 0, align_ = 0, lanes_ = 0;
    std::vector<uint32_t> lane_offsets_;   // host byte offset of each lane
};

const char* to_string(ScalarKind s);

} // namespace adjoint::ir
