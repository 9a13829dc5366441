// Lists of work for kernels whose work is sparse: the threads of a short dispatch each take every so many
// entries of a list that an earlier kernel filled (an atomic counter and a buffer).
//
// Why: lavapipe runs a SIMD group's 8 threads as one and a branch as both of its sides under a mask, so work
// under an $if costs every group that reaches it, taken or not, and a loop's body runs at least once for every
// group that enters it (engine/GUIDE.md, "Branches on lavapipe"). A kernel of one thread a pixel whose work
// is a few pixels' therefore pays for all of them; over a list, only the listed entries pay, in full groups.
#pragma once
#include <adjoint/adjoint.h>

#include <algorithm>

namespace adjoint::app {

// Entries per thread of a list's dispatch: the threads are a kListStride-th of the list's capacity. A thread's
// loops run for all its entries together, and lavapipe's loop budget (65,535 iterations a SIMD group,
// engine/GUIDE.md) is for all of them: work whose loops are long for one entry (a shadow test over a grid cell
// sized for that budget) takes stride 1.
constexpr uint32_t kListStride = 8;

// The threads to dispatch for a list with room for `capacity` entries.
inline uint32_t list_threads(size_t capacity, uint32_t stride = kListStride) {
    return uint32_t(std::max<size_t>(1, (capacity + stride - 1) / stride));
}

// In a 1D kernel dispatched at list_threads(): f(entry) for each entry of list[0 .. count[which]) this thread
// takes (entries dispatch_id().x, + dispatch_size().x, ...).
template <typename F>
void for_each_listed(const BufferUInt& list, const BufferUInt& count, uint32_t which, F&& f) {
    $for (i, dispatch_id().x, count.read(which), dispatch_size().x) { f(list.read(i)); };
}

// Appends `entry` to list where `take` holds, at the next slot of count[which] (in no particular order). An
// atomic an entry: one per subgroup (slots from an exclusive sum) measured no faster on lavapipe.
inline void append_listed(const BufferUInt& list, const BufferUInt& count, uint32_t which, const Bool& take,
                          const UInt& entry) {
    $if (take) { list.write(count.atomic(which).fetch_add(1u), entry); };
}

// Appends entry(b) for each set bit b of `flags` (n of them: the thread counted them as it set them), in
// ascending order, taking their slots with one atomic. A thread with several entries (raster_depth's quad of
// pixels, the antialias pairs' run of a row) does this, which measured faster on lavapipe than an atomic an entry
// (there an atomic costs a thread what a read does, app/GUIDE.md). The loop visits the set bits only (n
// iterations, not `bits`): the lowest set bit alone, its index from the exponent of its value as a float (a power
// of two, exact).
template <typename F>
void append_flagged(const BufferUInt& list, const BufferUInt& count, uint32_t which, const UInt& flags,
                    const UInt& n, F&& entry) {
    $if (n > 0u) {
        UInt slot = count.atomic(which).fetch_add(n);
        UInt rest = flags;
        $for (k, 0u, n) {
            UInt low = rest & (0u - rest);
            UInt b = (bit_cast<uint32_t>(cast<float>(low)) >> 23u) - 127u;
            list.write(slot + k, entry(b));
            rest = rest ^ low;
        };
    };
}

// Pixels of a row a thread takes in the kernels that gather a run's results before one atomic or one store (the
// antialias pairs, image_loss): a thread's fixed costs on lavapipe (its reads of arguments, its stores, which go
// lane by lane) are paid once for the run.
constexpr uint32_t kRowRun = 16;

// The threads along x of such a kernel over rows of `width` pixels; it is dispatched (row_runs(width), height).
inline uint32_t row_runs(uint32_t width) { return (width + kRowRun - 1) / kRowRun; }

// In a 2D kernel dispatched (row_runs(width), height): f(i, x, at) for each pixel of this thread's run that lies
// in its row, i its place in the run, x its column and at = y * width + x its index.
template <typename F>
void for_each_in_row_run(const UInt& width, F&& f) {
    UInt x0 = dispatch_id().x * kRowRun, y = dispatch_id().y;
    $for (i, 0u, kRowRun) {
        UInt x = x0 + i;
        $if (x < width) { f(i, x, y * width + x); };
    };
}

} // namespace adjoint::app
