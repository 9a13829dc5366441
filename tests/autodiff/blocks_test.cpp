// $autodiff with shared memory, sync_block() and subgroup operations: values from other threads are
// constants (as buffer reads are), replayed rather than recomputed in taped loops, and a subgroup operation
// on a value that carries a gradient is refused with its line.
#include "support.h"
#include "support/host_run.h"

#include <adjoint/pipeline/lower.h>

#include <cmath>

namespace adjoint::test {

namespace {

class AutodiffBlocks : public DeviceTest {};

// y = sum over k < 4 of p^2 * w[neighbour] * (k + 1), where each iteration passes the neighbour's weight
// through shared memory between two barriers: dy/dp = 2p * w[neighbour] * 10. A reverse pass that read
// shared memory again would see only the last iteration's values (factor 16, not 10).
template <bool Taped>
Kernel1D<void(BufferFloat, BufferFloat, BufferFloat, BufferFloat)> neighbour_kernel() {
    return [](BufferFloat xs, BufferFloat ws, BufferFloat ys, BufferFloat grads) noexcept {
        set_block_size(64);
        Shared<float> tile(64);
        UInt t = thread_id().x, i = dispatch_id().x;
        Float p = xs.read(i);
        $autodiff {
            requires_grad(p);
            Float y = 0.0f;
            if constexpr (Taped) tape_capacity(8);   // taped: the reverse loop recomputes each iteration
            $for (k, 0u, 4u) {
                tile.write(t, ws.read(i) * cast<float>(k + 1u));
                sync_block();
                Float neighbour = tile.read((t + 1u) % 64u);
                y += p * p * neighbour;
                sync_block();   // nobody overwrites the tile before every thread has read it
            };
            backward(y);
            ys.write(i, y);
            grads.write(i, grad(p));
        };
    };
}

template <typename K>
void check_neighbour_gradients(Device& device, Stream& stream, const K& k) {
    const uint32_t n = 256;
    auto x = random_floats(n, -2.0f, 2.0f, 3);
    auto w = random_floats(n, 0.5f, 1.5f, 4);
    auto shader = device.compile(k);
    auto xb = upload(device, stream, x);
    auto wb = upload(device, stream, w);
    auto yb = device.create_buffer<float>(n);
    auto gb = device.create_buffer<float>(n);
    stream << shader(xb, wb, yb, gb).dispatch(n);
    auto y = download(stream, yb);
    auto g = download(stream, gb);
    std::vector<float> hy(n), hg(n);
    interpret(k, {n, 1, 1}, x, w, hy, hg);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t nb = i - i % 64 + (i % 64 + 1) % 64;
        double want_y = double(x[i]) * x[i] * w[nb] * 10.0, want_g = 2.0 * x[i] * w[nb] * 10.0;
        ASSERT_NEAR(y[i], want_y, 1e-4 * (1 + std::fabs(want_y))) << i;
        ASSERT_NEAR(g[i], want_g, 1e-4 * (1 + std::fabs(want_g))) << i;
        ASSERT_NEAR(hg[i], want_g, 1e-4 * (1 + std::fabs(want_g))) << i;
    }
}

std::string at(int line) { return "autodiff/blocks_test.cpp:" + std::to_string(line); }

} // namespace

TEST_F(AutodiffBlocks, SharedMemoryBetweenBarriersInATapedLoop) {
    auto k = neighbour_kernel<true>();
    ASSERT_EQ(device.compile(k).tape_report().size(), 1u);
    // Its only tape is the side tape: each iteration's shared-memory read, replayed by the reverse pass.
    EXPECT_GT(device.compile(k).tape_report()[0].capacity, 0u);
    check_neighbour_gradients(device, stream, k);
}

TEST_F(AutodiffBlocks, SharedMemoryBetweenBarriersInAForwardModeLoop) {
    auto k = neighbour_kernel<false>();
    check_neighbour_gradients(device, stream, k);
}

// A subgroup sum of plain values inside a taped loop: a constant, replayed from the side tape when the
// reverse loop recomputes an iteration. With w = 1, s_k = (k + 1) * subgroup size and dy/dp = sum_k s_k.
TEST_F(AutodiffBlocks, SubgroupValuesInATapedLoopAreReplayed) {
    Kernel1D k = [](BufferFloat xs, BufferFloat ws, BufferFloat grads) noexcept {
        UInt i = dispatch_id().x;
        Float p = xs.read(i);
        $autodiff {
            requires_grad(p);
            Float y = 0.0f;
            tape_capacity(8);
            $for (j, 0u, 4u) {
                Float s = subgroup_add(ws.read(i) * cast<float>(j + 1u));
                y += sin(p) * s;
            };
            backward(y);
            grads.write(i, grad(p));
        };
    };
    const uint32_t n = 256;
    auto x = random_floats(n, -2.0f, 2.0f, 5);
    std::vector<float> w(n, 1.0f);
    auto shader = device.compile(k);
    auto xb = upload(device, stream, x);
    auto wb = upload(device, stream, w);
    auto gb = device.create_buffer<float>(n);
    stream << shader(xb, wb, gb).dispatch(n);
    auto g = download(stream, gb);
    const float size = float(device.subgroup_size());
    for (uint32_t i = 0; i < n; ++i) ASSERT_NEAR(g[i], std::cos(x[i]) * 10.0f * size, 1e-3f * size) << i;
    for (uint32_t s : {4u, 32u}) {
        std::vector<float> hg(n);
        interpret_with({.subgroup_size = s}, k, {n, 1, 1}, x, w, hg);
        for (uint32_t i = 0; i < n; ++i) ASSERT_NEAR(hg[i], std::cos(x[i]) * 10.0f * float(s), 1e-3f * float(s)) << i;
    }
}

TEST(AutodiffBlocksMisuse, SubgroupOperationOnAValueWithAGradientIsRefused) {
    int line = 0;
    Kernel1D k = [&](BufferFloat xs, BufferFloat grads) noexcept {
        UInt i = dispatch_id().x;
        Float p = xs.read(i);
        $autodiff {
            requires_grad(p);
            line = __LINE__; Float total = subgroup_add(p * p);
            backward(total);
            grads.write(i, grad(p));
        };
    };
    std::string e;
    try {
        pipeline::lower(*k.function());
    } catch (const Error& err) {
        e = err.what();
    }
    EXPECT_NE(e.find("subgroup_add at " + at(line)), std::string::npos) << e;
    EXPECT_NE(e.find("gradients do not flow between threads"), std::string::npos) << e;
    // Detached, it is a constant and differentiates.
    Kernel1D ok = [](BufferFloat xs, BufferFloat grads) noexcept {
        UInt i = dispatch_id().x;
        Float p = xs.read(i);
        $autodiff {
            requires_grad(p);
            Float total = p * subgroup_add(detach(p));
            backward(total);
            grads.write(i, grad(p));
        };
    };
    EXPECT_NO_THROW(pipeline::lower(*ok.function()));
}

} // namespace adjoint::test
