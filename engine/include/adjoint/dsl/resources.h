// Buffer and image parameters of kernels: reads, writes and atomics, recorded as IR resource ops.
#pragma once
#include <adjoint/dsl/builtins.h>

namespace adjoint {

namespace detail {
template <typename I>
ir::ValueId index_value(const I& i, const std::source_location& loc) {
    auto e = lift<uint32_t>(i);
    using T = typename decltype(e)::value_type;
    static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, int32_t>, "a buffer index is an int or uint");
    return e.id();
}
} // namespace detail

// An atomic reference to one element of a buffer or shared array: buf.atomic(i).fetch_add(v). Elements
// of float, int, uint and uint64 (the device's 64-bit atomics: packed depth and id, say) take them.
template <typename T>
class AtomicRef {
public:
    // `op`: ir::Op::BufferAtomic or ir::Op::SharedAtomic; `target`: the buffer argument or shared array.
    AtomicRef(ir::ValueId target, ir::ValueId index, ir::Op op = ir::Op::BufferAtomic)
        : buffer_(target), index_(index), op_(op) {}
    template <typename V>
    Expr<T> fetch_add(const V& v, std::source_location loc = std::source_location::current()) const {
        return op(ir::AtomicOp::Add, {detail::lift<T>(v).id()}, loc);
    }
    template <typename V>
    Expr<T> fetch_sub(const V& v, std::source_location loc = std::source_location::current()) const {
        auto& r = detail::Recorder::current(loc);
        ir::ValueId neg = r.b.unary(ir::Op::Neg, detail::lift<T>(v).id(), r.at(loc));
        return op(ir::AtomicOp::Add, {neg}, loc);
    }
    template <typename V>
    Expr<T> fetch_min(const V& v, std::source_location loc = std::source_location::current()) const {
        return op(ir::AtomicOp::Min, {detail::lift<T>(v).id()}, loc);
    }
    template <typename V>
    Expr<T> fetch_max(const V& v, std::source_location loc = std::source_location::current()) const {
        return op(ir::AtomicOp::Max, {detail::lift<T>(v).id()}, loc);
    }
    template <typename V>
    Expr<T> exchange(const V& v, std::source_location loc = std::source_location::current()) const {
        static_assert(!std::is_same_v<T, float>, "exchange is for int and uint buffers");
        return op(ir::AtomicOp::Exchange, {detail::lift<T>(v).id()}, loc);
    }
    template <typename E, typename D>
    Expr<T> compare_exchange(const E& expected, const D& desired,
                             std::source_location loc = std::source_location::current()) const {
        static_assert(!std::is_same_v<T, float>, "compare_exchange is for int and uint buffers");
        return op(ir::AtomicOp::CompareExchange, {detail::lift<T>(expected).id(), detail::lift<T>(desired).id()}, loc);
    }

private:
    Expr<T> op(ir::AtomicOp which, std::vector<ir::ValueId> values, const std::source_location& loc) const {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> ||
                          std::is_same_v<T, uint64_t>,
                      "atomics work on float, int, uint and uint64 elements");
        auto& r = detail::Recorder::current(loc);
        std::vector<ir::ValueId> ops{buffer_, index_};
        ops.insert(ops.end(), values.begin(), values.end());
        return Expr<T>(detail::FromId{}, r.b.emit(op_, std::move(ops), type_of<T>(), int64_t(which), r.at(loc)));
    }
    ir::ValueId buffer_, index_;
    ir::Op op_;
};

template <typename T>
class BufferVar {
public:
    using element_type = T;
    explicit BufferVar(ir::ValueId arg) : arg_(arg) {}

    template <typename I>
    Expr<T> read(const I& index, std::source_location loc = std::source_location::current()) const {
        auto& r = detail::Recorder::current(loc);
        r.at(loc);
        return Expr<T>(detail::FromId{}, r.b.emit(ir::Op::BufferRead, {arg_, detail::index_value(index, loc)}, type_of<T>(), 0, loc));
    }
    template <typename I, typename V>
    void write(const I& index, const V& value, std::source_location loc = std::source_location::current()) const {
        auto& r = detail::Recorder::current(loc);
        r.at(loc);
        ir::ValueId v = detail::lift<T>(value).id();
        if (r.b.type_of(v) != type_of<T>()) {
            detail::defer_error("type error: writing " + r.b.type_of(v)->to_string() + " into a buffer of " +
                                type_of<T>()->to_string() + " at " + format_location(loc));
            return;
        }
        r.b.emit(ir::Op::BufferWrite, {arg_, detail::index_value(index, loc), v}, ir::Type::void_type(), 0, loc);
    }
    template <typename I>
    AtomicRef<T> atomic(const I& index, std::source_location loc = std::source_location::current()) const {
        detail::Recorder::current(loc).at(loc);
        return AtomicRef<T>(arg_, detail::index_value(index, loc));
    }
    Expr<uint32_t> size(std::source_location loc = std::source_location::current()) const {
        auto& r = detail::Recorder::current(loc);
        return Expr<uint32_t>(detail::FromId{}, r.b.emit(ir::Op::BufferSize, {arg_}, ir::Type::u32(), 0, r.at(loc)));
    }
    ir::ValueId id() const { return arg_; }

private:
    ir::ValueId arg_;
};

// A 2D RGBA32F storage image.
class ImageVar {
public:
    explicit ImageVar(ir::ValueId arg) : arg_(arg) {}
    template <typename P>
    Expr<float4> read(const P& coord, std::source_location loc = std::source_location::current()) const {
        auto& r = detail::Recorder::current(loc);
        r.at(loc);
        return Expr<float4>(detail::FromId{}, r.b.emit(ir::Op::ImageRead, coord_value(coord), type_of<float4>(), 0, loc));
    }
    template <typename P, typename V>
    void write(const P& coord, const V& value, std::source_location loc = std::source_location::current()) const {
        auto& r = detail::Recorder::current(loc);
        r.at(loc);
        auto ops = coord_value(coord);
        ops.push_back(detail::lift<float4>(value).id());
        r.b.emit(ir::Op::ImageWrite, std::move(ops), ir::Type::void_type(), 0, loc);
    }
    Expr<uint2> size(std::source_location loc = std::source_location::current()) const {
        auto& r = detail::Recorder::current(loc);
        return Expr<uint2>(detail::FromId{}, r.b.emit(ir::Op::ImageSize, {arg_}, type_of<uint2>(), 0, r.at(loc)));
    }
    ir::ValueId id() const { return arg_; }

private:
    template <typename P>
    std::vector<ir::ValueId> coord_value(const P& p) const;
    ir::ValueId arg_;
};

template <typename P>
std::vector<ir::ValueId> ImageVar::coord_value(const P& p) const {
    auto e = detail::lift<uint2>(p);
    using T = typename decltype(e)::value_type;
    ir::ValueId c = e.id();
    if constexpr (std::is_same_v<T, int2>) c = detail::builder().cast(type_of<uint2>(), c);
    else static_assert(std::is_same_v<T, uint2>, "an image coordinate is a uint2 or int2");
    return {arg_, c};
}

// A differentiable buffer (host: DiffBuffer<T>): values paired with a gradient buffer of floats, one per
// component. Inside $autodiff a read is an active value, like a variable marked with requires_grad, and
// the generated code adds its adjoint into the gradient buffer (component c of element i at word
// i * components + c) with float atomics. Outside $autodiff it reads like a plain buffer.
template <typename T>
class DiffBufferVar {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, float2> || std::is_same_v<T, float3> ||
                      std::is_same_v<T, float4>,
                  "a differentiable buffer holds float, float2, float3 or float4");

public:
    using element_type = T;
    explicit DiffBufferVar(ir::ValueId arg) : values_(arg) {}

    template <typename I>
    Expr<T> read(const I& index, std::source_location loc = std::source_location::current()) const {
        return values_.read(index, loc);
    }
    template <typename I, typename V>
    void write(const I& index, const V& value, std::source_location loc = std::source_location::current()) const {
        values_.write(index, value, loc);
    }
    Expr<uint32_t> size(std::source_location loc = std::source_location::current()) const { return values_.size(loc); }
    ir::ValueId id() const { return values_.id(); }

private:
    BufferVar<T> values_;
};

using BufferFloat = BufferVar<float>;
using BufferFloat2 = BufferVar<float2>;
using BufferFloat3 = BufferVar<float3>;
using BufferFloat4 = BufferVar<float4>;
using BufferInt = BufferVar<int32_t>;
using BufferUInt = BufferVar<uint32_t>;
using BufferUInt64 = BufferVar<uint64_t>;
using ImageFloat = ImageVar;
using DiffBufferFloat = DiffBufferVar<float>;
using DiffBufferFloat2 = DiffBufferVar<float2>;
using DiffBufferFloat3 = DiffBufferVar<float3>;
using DiffBufferFloat4 = DiffBufferVar<float4>;

} // namespace adjoint
