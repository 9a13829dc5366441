// A mesh file's polygon as triangles: ears clipped in the polygon's best-fit plane, keeping its winding.
#include "scene/loading.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace adjoint::app::detail {

namespace {

struct Point2 {
    double x, y;
    bool operator==(const Point2&) const = default;
};

// Twice the signed area of a, b, c: > 0 when they turn counter-clockwise.
double turn(Point2 a, Point2 b, Point2 c) { return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x); }

// A convex quad split as tinyobjloader split it (along the shorter diagonal, lengths in float, a tie to corners
// 1-3 counting from 0), so that quads keep the triangles, and meshes the pictures, they had before.
void split_quad(std::span<const float3> p, std::vector<uint3>& triangles) {
    const float e02x = p[2].x - p[0].x, e02y = p[2].y - p[0].y, e02z = p[2].z - p[0].z;
    const float e13x = p[3].x - p[1].x, e13y = p[3].y - p[1].y, e13z = p[3].z - p[1].z;
    const float sqr02 = e02x * e02x + e02y * e02y + e02z * e02z;
    const float sqr13 = e13x * e13x + e13y * e13y + e13z * e13z;
    if (sqr02 < sqr13) {
        triangles.push_back(uint3(0, 1, 2));
        triangles.push_back(uint3(0, 2, 3));
    } else {
        triangles.push_back(uint3(0, 1, 3));
        triangles.push_back(uint3(1, 2, 3));
    }
}

// The polygon's corners in its plane, counter-clockwise when it winds the way it faces, or nothing when it
// has no plane (no area: its corners in a line, or a figure eight whose halves cancel). `scale`: the square
// of its largest extent from corner 0, which tolerances scale with.
std::vector<Point2> in_plane(std::span<const float3> corners, double& scale) {
    // About corner 0, in double; Newell's normal is then the sum of the cross products of consecutive corners.
    std::vector<std::array<double, 3>> q(corners.size());
    scale = 0;
    for (size_t i = 0; i < corners.size(); ++i) {
        for (size_t k = 0; k < 3; ++k) q[i][k] = double(corners[i][k]) - double(corners[0][k]);
        scale = std::max(scale, q[i][0] * q[i][0] + q[i][1] * q[i][1] + q[i][2] * q[i][2]);
    }
    double w[3] = {0, 0, 0};
    for (size_t i = 1; i + 1 < q.size(); ++i) {
        w[0] += q[i][1] * q[i + 1][2] - q[i][2] * q[i + 1][1];
        w[1] += q[i][2] * q[i + 1][0] - q[i][0] * q[i + 1][2];
        w[2] += q[i][0] * q[i + 1][1] - q[i][1] * q[i + 1][0];
    }
    const double area2 = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    if (!(area2 > 1e-12 * scale)) return {};
    for (double& c : w) c /= area2;
    // u across w from the axis w is least along, v = w x u: u x v = w, so the polygon's own winding is
    // counter-clockwise in (u, v).
    const size_t least = std::abs(w[0]) <= std::abs(w[1]) && std::abs(w[0]) <= std::abs(w[2]) ? 0
                         : std::abs(w[1]) <= std::abs(w[2])                                     ? 1
                                                                                                 : 2;
    double e[3] = {0, 0, 0};
    e[least] = 1;
    double u[3] = {e[1] * w[2] - e[2] * w[1], e[2] * w[0] - e[0] * w[2], e[0] * w[1] - e[1] * w[0]};
    const double u_length = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (double& c : u) c /= u_length;
    const double v[3] = {w[1] * u[2] - w[2] * u[1], w[2] * u[0] - w[0] * u[2], w[0] * u[1] - w[1] * u[0]};
    std::vector<Point2> points(q.size());
    for (size_t i = 0; i < q.size(); ++i)
        points[i] = {q[i][0] * u[0] + q[i][1] * u[1] + q[i][2] * u[2],
                     q[i][0] * v[0] + q[i][1] * v[1] + q[i][2] * v[2]};
    return points;
}

} // namespace

void triangulate_polygon(std::span<const float3> corners, std::vector<uint3>& triangles) {
    const uint32_t n = static_cast<uint32_t>(corners.size());
    if (n < 3) return;
    if (n == 3) return triangles.push_back(uint3(0, 1, 2));
    double scale = 0;
    const std::vector<Point2> p = in_plane(corners, scale);
    // A turn this small is straight: the rounding of corners in a line as they are placed in the plane.
    const double straight = 1e-12 * scale;
    if (n == 4) {
        bool convex = true;
        for (uint32_t i = 0; i < 4 && !p.empty(); ++i)
            convex = convex && turn(p[(i + 3) % 4], p[i], p[(i + 1) % 4]) >= -straight;
        if (convex) return split_quad(corners, triangles);
    }

    // Ears clipped from a ring of the corners left: the triangle a, b, c is an ear, and b is clipped, when b
    // turns the polygon's way and no other corner left is inside the triangle or on it (a corner that
    // repeats one of a, b or c, as a keyhole's bridge does, is neither). A straight b, or a spike, is an ear
    // only when no corner left makes a proper one (flat_ears): clipping it removes no area and the new side
    // a-c lies on the old ones, but it is a triangle of no area. An ear is looked for at the same a first, so
    // that a convex polygon is a fan from its first corner.
    std::vector<uint32_t> next(n);
    for (uint32_t i = 0; i < n; ++i) next[i] = (i + 1) % n;
    bool flat_ears = false;
    const auto ear = [&](uint32_t a, uint32_t b, uint32_t c) {
        const double t = turn(p[a], p[b], p[c]);
        if (t < -straight) return false;
        if (t <= straight) return flat_ears;
        for (uint32_t r = next[c]; r != a; r = next[r]) {
            const Point2 x = p[r];
            if (x == p[a] || x == p[b] || x == p[c]) continue;
            if (turn(p[a], p[b], x) >= 0 && turn(p[b], p[c], x) >= 0 && turn(p[c], p[a], x) >= 0) return false;
        }
        return true;
    };
    uint32_t left = n, a = 0;
    if (!p.empty()) {
        for (uint32_t misses = 0; left > 3;) {
            const uint32_t b = next[a], c = next[b];
            if (ear(a, b, c)) {
                triangles.push_back(uint3(a, b, c));
                next[a] = c;
                --left;
                misses = 0;
                flat_ears = false;
            } else if (++misses < left) {
                a = b;
            } else if (!flat_ears) {
                flat_ears = true;   // every a tried: no proper ear
                misses = 0;
            } else {
                break;
            }
        }
    }
    // The last three corners; or, for a polygon without a plane or with no ear left (one that crosses
    // itself, which no set of triangles covers exactly), a fan over the corners left: the same count of
    // triangles, winding the same way, rather than refusing a file that loaded before.
    for (uint32_t b = next[a]; next[b] != a; b = next[b]) triangles.push_back(uint3(a, b, next[b]));
}

} // namespace adjoint::app::detail
