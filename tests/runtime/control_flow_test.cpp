// Control flow end to end ($for/$while/$loop/$switch/$if, break/continue, callables with early $return).
#include "support/device_fixture.h"
#include "support/host_run.h"

namespace adjoint::test {

namespace {

std::vector<int32_t> iota_ints(size_t n, int32_t first = 0) {
    std::vector<int32_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = first + int32_t(i);
    return v;
}

class ControlFlow : public DeviceTest {
protected:
    // Runs kernel(in, out) over in.size() threads on the device and in the interpreter; both must equal
    // `want` element for element.
    template <typename K, typename In, typename Out>
    void expect_both(const K& kernel, std::vector<In> in, const std::vector<Out>& want) {
        const uint32_t n = uint32_t(in.size());
        auto shader = device.compile(kernel);
        auto in_buf = upload(device, stream, in);
        auto out_buf = device.create_buffer<Out>(n);
        stream << shader(in_buf, out_buf).dispatch(n);
        auto gpu = download(stream, out_buf);
        std::vector<Out> host(n);
        interpret(kernel, {n, 1, 1}, in, host);
        int bad = 0;
        for (uint32_t i = 0; i < n && bad < 5; ++i) {
            bad += (gpu[i] != want[i]) + (host[i] != want[i]);   // stop after a few, not one line per thread
            EXPECT_EQ(gpu[i], want[i]) << "device, thread " << i;
            EXPECT_EQ(host[i], want[i]) << "interpreter, thread " << i;
        }
    }
};

} // namespace

TEST_F(ControlFlow, NestedForWithBreakAndContinue) {
    Kernel1D k = [](BufferInt in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Int n = in.read(i);
        Int acc = 0;
        $for (a, 0, n) {
            $if (a % 3 == 2) { $continue; };
            $for (b, a) {
                $if (b == 4) { $break; };
                $if ((a + b) % 2 == 1) { $continue; };
                acc += a * 10 + b;
            };
            $if (acc > 500) { $break; };
        };
        out.write(i, acc);
    };
    auto in = iota_ints(64);
    std::vector<int32_t> want;
    for (int32_t n : in) {
        int32_t acc = 0;
        for (int32_t a = 0; a < n; ++a) {
            if (a % 3 == 2) continue;
            for (int32_t b = 0; b < a; ++b) {
                if (b == 4) break;
                if ((a + b) % 2 == 1) continue;
                acc += a * 10 + b;
            }
            if (acc > 500) break;
        }
        want.push_back(acc);
    }
    expect_both(k, in, want);
}

TEST_F(ControlFlow, ForWithStepsAndUnsignedCounter) {
    Kernel1D k = [](BufferInt in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Int n = in.read(i);
        Int acc = 0;
        $for (j, n, 0, -3) { acc = acc * 3 + j; };          // counts down: n, n-3, ... > 0
        $for (u, 1u, cast<uint>(n), 2u) { acc += cast<int>(u); };
        $for (j, 2, 5) { acc += j * 100; };
        out.write(i, acc);
    };
    auto in = iota_ints(40);
    std::vector<int32_t> want;
    for (int32_t n : in) {
        int32_t acc = 0;
        for (int32_t j = n; j > 0; j -= 3) acc = acc * 3 + j;
        for (uint32_t u = 1; u < uint32_t(n); u += 2) acc += int32_t(u);
        for (int32_t j = 2; j < 5; ++j) acc += j * 100;
        want.push_back(acc);
    }
    expect_both(k, in, want);
}

// A uint counter with a negative step wrapped the step to 4294967295 and ran no iteration, silently. It counts
// down now, as an int counter does, by a literal step and by an Int whose sign is known at run time only; and a
// step past 0 (10, 7, 4, 1 towards 0) ends there instead of going on at 4294967294.
TEST_F(ControlFlow, AUintCounterWithANegativeStepCountsDown) {
    Kernel1D k = [](BufferInt in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Int n = in.read(i);
        Int step = ite(n % 2 == 0, -3, 3);
        UInt end = ite(n % 2 == 0, 0u, 20u);
        Int acc = 0;
        $for (u, cast<uint>(n), 0u, -1) { acc = acc * 2 + cast<int>(u); };     // n, n-1, ..., 1
        $for (u, cast<uint>(n), 0u, -4) { acc = acc * 5 + cast<int>(u); };     // n, n-4, ... > 0, never wrapping
        $for (u, cast<uint>(n), end, step) { acc = acc * 3 + cast<int>(u); };  // even: down to 0; odd: up to 20
        out.write(i, acc);
    };
    auto in = iota_ints(12);
    std::vector<int32_t> want;
    for (int32_t n : in) {
        int32_t acc = 0;
        for (int64_t u = n; u > 0; --u) acc = acc * 2 + int32_t(u);
        for (int64_t u = n; u > 0; u -= 4) acc = acc * 5 + int32_t(u);
        if (n % 2 == 0)
            for (int64_t u = n; u > 0; u -= 3) acc = acc * 3 + int32_t(u);
        else
            for (int64_t u = n; u < 20; u += 3) acc = acc * 3 + int32_t(u);
        want.push_back(acc);
    }
    expect_both(k, in, want);
}

TEST_F(ControlFlow, WhileCountsCollatzSteps) {
    Kernel1D k = [](BufferUInt in, BufferUInt out) noexcept {
        auto i = dispatch_id().x;
        UInt x = in.read(i);
        UInt steps = 0u;
        $while (x != 1u) {
            $if (x % 2u == 0u) { x = x / 2u; } $else { x = 3u * x + 1u; };
            steps += 1u;
        };
        out.write(i, steps);
    };
    std::vector<uint32_t> in, want;
    for (uint32_t s = 1; s <= 500; ++s) {
        in.push_back(s);
        uint32_t x = s, steps = 0;
        while (x != 1) { x = x % 2 == 0 ? x / 2 : 3 * x + 1; ++steps; }
        want.push_back(steps);
    }
    expect_both(k, in, want);
}

TEST_F(ControlFlow, ContinueInWhileAndLoop) {
    // $continue in $while re-tests the condition; in $loop it restarts the body. Neither has an increment.
    Kernel1D k = [](BufferInt in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Int n = in.read(i);
        Int j = 0;
        Int odd_sum = 0;
        $while (j < n) {
            j += 1;
            $if (j % 2 == 0) { $continue; };
            odd_sum += j;
        };
        Int k = 0;
        Int skipped = 0;
        $loop {
            k += 1;
            $if (k > n) { $break; };
            $if (k % 3 != 0) { skipped += 1; $continue; };
            odd_sum += 1000;
        };
        out.write(i, odd_sum + skipped * 1000000);
    };
    auto in = iota_ints(40);
    std::vector<int32_t> want;
    for (int32_t n : in) {
        int32_t odd = 0, skipped = 0;
        for (int32_t j = 1; j <= n; ++j)
            if (j % 2) odd += j;
        for (int32_t k = 1; k <= n; ++k) {
            if (k % 3 != 0) ++skipped;
            else odd += 1000;
        }
        want.push_back(odd + skipped * 1000000);
    }
    expect_both(k, in, want);
}

TEST_F(ControlFlow, LoopWithBreakHalvesUntilSmall) {
    Kernel1D k = [](BufferFloat in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Float v = in.read(i);
        Int halvings = 0;
        $loop {
            $if (v < 1.0f) { $break; };
            v = v * 0.5f;
            halvings += 1;
        };
        out.write(i, halvings);
    };
    auto in = random_floats(300, 0.1f, 5000.0f, 3);
    std::vector<int32_t> want;
    for (float v : in) {
        int32_t h = 0;
        while (!(v < 1.0f)) { v *= 0.5f; ++h; }
        want.push_back(h);
    }
    expect_both(k, in, want);
}

TEST_F(ControlFlow, SwitchWithCasesDefaultAndBreak) {
    Kernel1D k = [](BufferInt in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Int x = in.read(i);
        Int r = 0;
        // A $break inside a case leaves the switch, not the enclosing loop.
        $for (round, 2) {
            $switch (x % 5) {
                $case (0) { r += 10; };
                $case (1) { r += 11; $break; };
                $case (3) {
                    $if (x > 20) { $break; };
                    r += 13;
                };
                $default { r += 100 * (round + 1); };
            };
            r += 1000;
        };
        out.write(i, r);
    };
    auto in = iota_ints(50);
    std::vector<int32_t> want;
    for (int32_t x : in) {
        int32_t r = 0;
        for (int32_t round = 0; round < 2; ++round) {
            switch (x % 5) {
            case 0: r += 10; break;
            case 1: r += 11; break;
            case 3: if (x > 20) break; r += 13; break;
            default: r += 100 * (round + 1); break;
            }
            r += 1000;
        }
        want.push_back(r);
    }
    expect_both(k, in, want);
}

TEST_F(ControlFlow, SwitchOnUnsignedWithoutDefault) {
    Kernel1D k = [](BufferUInt in, BufferUInt out) noexcept {
        auto i = dispatch_id().x;
        UInt x = in.read(i);
        UInt r = 7u;
        $switch (x) {
            $case (2) { r = 20u; };
            $case (4) { r = 40u; };
        };
        out.write(i, r);
    };
    std::vector<uint32_t> in{0, 1, 2, 3, 4, 5, 2, 4}, want{7, 7, 20, 7, 40, 7, 20, 40};
    expect_both(k, in, want);
}

TEST_F(ControlFlow, IfElifElseChain) {
    Kernel1D k = [](BufferFloat in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Float x = in.read(i);
        Int r = -1;
        $if (x < -0.5f) { r = 0; }
        $elif (x < 0.0f) { r = 1; }
        $elif (x < 0.5f) {
            $if (x < 0.25f) { r = 2; } $else { r = 3; };
        }
        $else { r = 4; };
        out.write(i, r);
    };
    auto in = random_floats(500, -1, 1, 5);
    std::vector<int32_t> want;
    for (float x : in) want.push_back(x < -0.5f ? 0 : x < 0.0f ? 1 : x < 0.5f ? (x < 0.25f ? 2 : 3) : 4);
    expect_both(k, in, want);
}

// ---- callables --------------------------------------------------------------------------------------------

TEST_F(ControlFlow, CallablesCallCallablesWithEarlyReturn) {
    Callable square = [](Float x) noexcept { return x * x; };
    // Early $return from an $if; the fall-through path calls another callable.
    Callable limited_square = [&](Float x, Float limit) noexcept {
        $if (x > limit) { $return(limit); };
        return square(x);
    };
    Callable<float(float)> twice = [&](Float x) noexcept { return limited_square(x, 4.0f) + limited_square(x * 0.5f, 4.0f); };
    Kernel1D k = [&](BufferFloat in, BufferFloat out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, twice(in.read(i)));
    };
    std::vector<float> in{-3, -1, 0, 0.5f, 1, 2, 3, 4, 5, 8, 9, 100};
    std::vector<float> want;
    auto ls = [](float x, float lim) { return x > lim ? lim : x * x; };
    for (float x : in) want.push_back(ls(x, 4) + ls(x * 0.5f, 4));
    expect_both(k, in, want);
}

TEST_F(ControlFlow, ReturnFromInsideLoopsOfACallable) {
    // $return inside a $for inside a $for inside a callable: the exit must cross both loops.
    Callable first_pair = [](Int target) noexcept {
        $for (a, 1, 20) {
            $for (b, 1, 20) {
                $if (a * b == target) { $return(a * 100 + b); };
            };
        };
        return Expr<int32_t>(-1);
    };
    // A loop in the kernel around the call: the callable's exit must not leave the kernel's loop.
    Kernel1D k = [&](BufferInt in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Int acc = 0;
        $for (rep, 3) {
            acc += first_pair(in.read(i) + rep);
        };
        out.write(i, acc);
    };
    auto first_pair_ref = [](int32_t t) {
        for (int32_t a = 1; a < 20; ++a)
            for (int32_t b = 1; b < 20; ++b)
                if (a * b == t) return a * 100 + b;
        return -1;
    };
    auto in = iota_ints(120, -5);
    std::vector<int32_t> want;
    for (int32_t x : in) want.push_back(first_pair_ref(x) + first_pair_ref(x + 1) + first_pair_ref(x + 2));
    expect_both(k, in, want);
}

TEST_F(ControlFlow, VoidCallableWithBufferParameterAndEarlyReturn) {
    // Returns early from inside a $switch and writes through a buffer parameter.
    Callable store_class = [](BufferInt out, UInt index, Int v) noexcept {
        $switch (v % 4) {
            $case (0) { $return(); };
            $case (1) { out.write(index, 100 + v); $return(); };
            $default {};
        };
        out.write(index, -v);
    };
    Kernel1D k = [&](BufferInt in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        out.write(i, 7);
        store_class(out, i, in.read(i));
    };
    auto in = iota_ints(40);
    std::vector<int32_t> want;
    for (int32_t v : in) want.push_back(v % 4 == 0 ? 7 : v % 4 == 1 ? 100 + v : -v);
    expect_both(k, in, want);
}

TEST_F(ControlFlow, LocalArraysWithDynamicIndices) {
    Kernel1D k = [](BufferInt in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Int n = in.read(i);
        ArrayInt<8> a;
        $for (j, 8) { a[j] = j * j + n; };
        Int s = 0;
        $for (j, n % 8, 8) { s += a[j]; };
        ArrayFloat<2> pair{1.0f, cast<float>(n)};
        out.write(i, s + cast<int>(pair[n % 2]));
    };
    auto in = iota_ints(30);
    std::vector<int32_t> want;
    for (int32_t n : in) {
        int32_t s = 0;
        for (int32_t j = n % 8; j < 8; ++j) s += j * j + n;
        want.push_back(s + (n % 2 == 0 ? 1 : n));
    }
    expect_both(k, in, want);
}

// Accesses at constant indices out of range, in a branch that no thread runs: GLSL checks constant indices at compile
// time (glslang refused 2^32 - 1 into a buffer, "index out of range '-1'", 9 into a shared array of 4, 7 into a local
// array of 4, lane 3 of a 3-vector as .w), and such code is legal where it does not run.
TEST_F(ControlFlow, ConstantIndicesOutOfRangeInABranchThatDoesNotRun) {
    Kernel1D k = [](BufferInt in, BufferInt out) noexcept {
        auto i = dispatch_id().x;
        Int n = in.read(i);
        Shared<int> kept(4);
        ArrayInt<4> a;
        $for (j, 4) { a[j] = n; };
        Int3 v = make_int3(n, n, n);
        Float4 col = make_float4(1.0f);
        Float4x4 m = make_float4x4(col, col, col, col);
        $if (n < 0) {
            UInt last = ~0u, seven = 7u, three = 3u;
            kept.write(9u, n);
            out.write(last, kept.read(9u));
            out.atomic(0u - 1u).fetch_add(n);
            kept.atomic(4u).fetch_add(n);
            a[seven] = n;
            a[last] = n;
            v[three] = n;
            out.write(i, a[seven] + v[three] + v[last] + cast<int>(m[seven].x));
        };
        out.write(i, a[3] * 3);
    };
    auto in = iota_ints(40);
    std::vector<int32_t> want;
    for (int32_t n : in) want.push_back(n * 3);
    expect_both(k, in, want);
}

} // namespace adjoint::test
