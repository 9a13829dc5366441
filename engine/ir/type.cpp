// Interning and layout of IR types; host layout follows the C++ value types (std430-compatible).
#include <adjoint/ir/type.h>

#include <adjoint/core/error.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace adjoint::ir {

namespace {

struct Interner {
    std::mutex mutex;
    std::map<std::tuple<int, int, uint32_t, const Type*, std::string>, std::unique_ptr<Type>> table;
};

Interner& interner() {
    static Interner instance;
    return instance;
}

void finish_layout(Type& t) {
    using K = Type::Kind;
    switch (t.kind_) {
    case K::Void: case K::Buffer: case K::Image: break;
    case K::Scalar:
        if (t.scalar_ == ScalarKind::UInt64) {
            t.size_ = t.align_ = 8; t.lanes_ = 2; t.lane_offsets_ = {0, 4};
        } else {
            t.size_ = t.align_ = 4; t.lanes_ = 1; t.lane_offsets_ = {0};
        }
        break;
    case K::Vector:
        t.lanes_ = t.dim_;
        t.size_ = t.dim_ == 2 ? 8 : 16;   // float3 is padded to 16 bytes, as in std430 arrays
        t.align_ = t.size_;
        for (uint32_t i = 0; i < t.dim_; ++i) t.lane_offsets_.push_back(4 * i);
        break;
    case K::Matrix: {
        const Type* col = t.element_;
        t.lanes_ = t.dim_ * t.dim_;
        t.size_ = col->size_ * t.dim_; t.align_ = col->align_;
        for (uint32_t c = 0; c < t.dim_; ++c)
            for (uint32_t r = 0; r < t.dim_; ++r) t.lane_offsets_.push_back(c * col->size_ + 4 * r);
        break;
    }
    case K::Array: {
        const Type* e = t.element_;
        uint32_t stride = (e->size_ + e->align_ - 1) / e->align_ * e->align_;
        t.lanes_ = e->lanes_ * t.dim_; t.size_ = stride * t.dim_; t.align_ = e->align_;
        for (uint32_t i = 0; i < t.dim_; ++i)
            for (uint32_t o : e->lane_offsets_) t.lane_offsets_.push_back(i * stride + o);
        break;
    }
    case K::Struct:
        t.lanes_ = 0;
        for (size_t m = 0; m < t.members_.size(); ++m) {
            t.lanes_ += t.members_[m]->lanes_;
            for (uint32_t o : t.members_[m]->lane_offsets_) t.lane_offsets_.push_back(t.offsets_[m] + o);
        }
        break;
    }
}

const Type* intern(Type&& proto, const std::string& key_extra) {
    auto& in = interner();
    std::lock_guard lock(in.mutex);
    auto key = std::make_tuple(int(proto.kind_), int(proto.scalar_), proto.dim_, proto.element_, key_extra);
    auto it = in.table.find(key);
    if (it != in.table.end()) return it->second.get();
    auto t = std::make_unique<Type>(std::move(proto));
    finish_layout(*t);
    const Type* result = t.get();
    in.table.emplace(key, std::move(t));
    return result;
}

} // namespace

const Type* Type::void_type() { return intern(Type(Kind::Void), {}); }

const Type* Type::scalar(ScalarKind s) {
    Type t(Kind::Scalar);
    t.scalar_ = s;
    return intern(std::move(t), {});
}

const Type* Type::vector(ScalarKind s, uint32_t n) {
    if (n == 1) return scalar(s);
    if (n < 2 || n > 4) fail("vector types have 2 to 4 components, not ", n);
    if (s == ScalarKind::UInt64) fail("uint64 is a scalar type only: there are no uint64 vectors");
    Type t(Kind::Vector);
    t.scalar_ = s; t.dim_ = n; t.element_ = scalar(s);
    return intern(std::move(t), {});
}

const Type* Type::matrix(uint32_t n) {
    if (n < 2 || n > 4) fail("matrix types are 2x2 to 4x4, not ", n, "x", n);
    Type t(Kind::Matrix);
    t.dim_ = n; t.element_ = vector(ScalarKind::Float, n);
    return intern(std::move(t), {});
}

const Type* Type::array(const Type* element, uint32_t n) {
    if (!element->is_value()) fail("arrays hold values, not ", element->to_string());
    Type t(Kind::Array);
    t.scalar_ = element->scalar_; t.dim_ = n; t.element_ = element;
    return intern(std::move(t), {});
}

const Type* Type::structure(std::string name, std::vector<const Type*> members, std::vector<std::string> names,
                            std::vector<uint32_t> offsets, uint32_t size, uint32_t align) {
    Type t(Kind::Struct);
    t.name_ = std::move(name);
    t.members_ = std::move(members); t.member_names_ = std::move(names); t.offsets_ = std::move(offsets);
    t.size_ = size; t.align_ = align;
    std::string key = t.name_;
    for (auto* m : t.members_) key += "|" + m->to_string();
    for (auto o : t.offsets_) key += "|" + std::to_string(o);
    return intern(std::move(t), key);
}

const Type* Type::buffer(const Type* element) {
    Type t(Kind::Buffer);
    t.element_ = element;
    return intern(std::move(t), {});
}

const Type* Type::diff_buffer(const Type* element) {
    Type t(Kind::Buffer);
    t.element_ = element;
    t.dim_ = 1;
    return intern(std::move(t), {});
}

const Type* Type::image() { return intern(Type(Kind::Image), {}); }

bool Type::has_float() const {
    switch (kind_) {
    case Kind::Scalar: case Kind::Vector: case Kind::Matrix: return scalar_ == ScalarKind::Float;
    case Kind::Array: return element_->has_float();
    case Kind::Struct:
        for (auto* m : members_) if (m->has_float()) return true;
        return false;
    default: return false;
    }
}

ScalarKind Type::lane_kind(uint32_t i) const {
    switch (kind_) {
    case Kind::Array: return element_->lane_kind(i % element_->lanes_);
    case Kind::Struct:
        for (auto* m : members_) {
            if (i < m->lanes_) return m->lane_kind(i);
            i -= m->lanes_;
        }
        return ScalarKind::Float;
    case Kind::Matrix: return ScalarKind::Float;
    default: return scalar_;
    }
}

uint32_t Type::lane_offset(uint32_t i) const { return lane_offsets_.at(i); }

const Type* Type::with_scalar(ScalarKind s) const {
    switch (kind_) {
    case Kind::Scalar: return scalar(s);
    case Kind::Vector: return vector(s, dim_);
    default: fail("cannot change the component kind of ", to_string());
    }
}

const char* to_string(ScalarKind s) {
    switch (s) {
    case ScalarKind::Bool: return "bool";
    case ScalarKind::Int: return "int";
    case ScalarKind::UInt: return "uint";
    case ScalarKind::Float: return "float";
    case ScalarKind::UInt64: return "uint64";
    }
    return "?";
}

std::string Type::to_string() const {
    switch (kind_) {
    case Kind::Void: return "void";
    case Kind::Scalar: return ir::to_string(scalar_);
    case Kind::Vector: return std::string(ir::to_string(scalar_)) + std::to_string(dim_);
    case Kind::Matrix: return "float" + std::to_string(dim_) + "x" + std::to_string(dim_);
    case Kind::Array: return "array<" + element_->to_string() + "," + std::to_string(dim_) + ">";
    case Kind::Struct: return name_;
    case Kind::Buffer: return (dim_ ? "diff_buffer<" : "buffer<") + element_->to_string() + ">";
    case Kind::Image: return "image2d";
    }
    return "?";
}

} // namespace adjoint::ir
