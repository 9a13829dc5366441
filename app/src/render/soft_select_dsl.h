// Soft rasterization's pass 0 (render/soft_dsl.h): each pixel's candidates from its tile's list, every one
// within reach or, with render.soft.faces_per_pixel, the K that weigh most.
#pragma once
#include "render/soft_dsl.h"

#include <array>
#include <vector>

namespace adjoint::app {

// Pass 0, on plain values, once per render: each pixel's own candidates, the triangles of its tile whose
// outline as the binning projected it comes within `reach_px` pixels of the pixel's centre. The blend tests
// each candidate exactly again (soft_fragment), so `reach_px` carries a slack for the two projections' rounding;
// the list only spares them the triangles out of reach, most of a tile's. An invocation selects for a quad of
// pixels (2x2, in one tile, so with one list; the tile's quads are consecutive invocations, tile_quad in
// render/raster.h), and the quad's pixels share each iteration's list and setup reads. A long tile list is
// selected from in parts, one a dispatch (soft_part), each pixel's count going on from what the earlier parts
// found.
constexpr uint32_t kSoftQuad = 4;   // pixels an invocation selects for
static_assert(gpu::kTileSize % 2 == 0, "a 2x2 quad at even coordinates lies in one tile");
struct SoftQuad {
    std::array<Float2, kSoftQuad> centre;   // far outside the image where the pixel is (an odd size's edge)
    std::array<Bool, kSoftQuad> valid;
    std::array<UInt, kSoftQuad> at;         // the pixel's index (y * width + x)
    std::array<UInt, kSoftQuad> n;          // its count
    std::array<UInt, kSoftQuad> own;        // where its own list begins (soft_own)
    UInt own_stride;                        // its entries' distance
};

// What the selection reprojects a triangle that reaches nearer than the near plane from, in a kernel that clips
// (SoftSettings::clip): its setup's corners do not describe it (a corner behind the camera projects mirrored), so
// it is clipped as the passes clip it (clip_triangle, from the same camera values). The scans take a
// null pointer where the kernel does not clip.
struct SoftClipSource {
    const BufferFloat3& positions;
    const BufferVar<uint3>& triangles;
    const DslCamera& cam;
    Float near;
};

// A candidate as the selection sees it from a quad pixel: whether the pixel is inside its outline, its squared
// distance to it (pixels), and the view depth of the point the passes shade (the pixel's, or the nearest point of
// the outline).
struct SoftCandidate {
    Bool inside;
    Float d2, depth;
};

// Calls within(i, tri, candidate) if triangle `tri` is within reach of quad pixel i.
template <typename Within>
void soft_scan_entry(const BufferVar<gpu::TriSetup>& setups, const SoftClipSource* src, const UInt& tri,
                     const SoftQuad& q, const Float& reach_px, const Within& within) {
    auto s = setups.read(tri);
    Float2 lo = min(min(s.p0, s.p1), s.p2) - reach_px, hi = max(max(s.p0, s.p1), s.p2) + reach_px;
    Float area = edge_function(s.p0, s.p1, s.p2);
    auto projected = [&](const Float2& p, SoftCandidate& cand, Bool& hit) {
        Outline o = outline_seen_from(p, s.p0, s.p1, s.p2, area);
        cand.inside = o.inside;
        cand.d2 = o.d2;
        cand.depth = 1.0f / dot(ite(o.inside, o.l, o.nearest), s.inv_w);
        hit = o.inside | (o.d2 < reach_px * reach_px);
    };
    if (!src) {
        for (uint32_t i = 0; i < kSoftQuad; ++i) {
            const Float2& p = q.centre[i];
            $if ((p.x >= lo.x) & (p.y >= lo.y) & (p.x <= hi.x) & (p.y <= hi.y)) {
                SoftCandidate cand;
                Bool hit;
                projected(p, cand, hit);
                $if (hit) { within(i, tri, cand); };
            };
        }
        return;
    }
    // Nearer than the near plane: 1 / w above 1 / near, or <= 0 for a corner on or behind the camera's plane
    // (projective_w).
    Bool clipped = (max(max(s.inv_w.x, s.inv_w.y), s.inv_w.z) > 1.0f / src->near) |
                   (min(min(s.inv_w.x, s.inv_w.y), s.inv_w.z) <= 0.0f);
    ClippedTriangle ct;
    $if (clipped) {
        UInt3 t = src->triangles.read(tri);
        const Float4 c[3] = {src->cam.clip(src->positions.read(t.x)), src->cam.clip(src->positions.read(t.y)),
                             src->cam.clip(src->positions.read(t.z))};
        ct = clip_triangle(c, src->cam.width, src->cam.height, src->near);   // once for the quad's pixels
        // The tile box, from the clipped part, binned it (setup_triangle).
        lo = make_float2(-3e38f);
        hi = make_float2(3e38f);
    };
    for (uint32_t i = 0; i < kSoftQuad; ++i) {
        const Float2& p = q.centre[i];
        SoftCandidate cand{false, 0.0f, 0.0f};
        Bool hit = false;
        $if ((p.x >= lo.x) & (p.y >= lo.y) & (p.x <= hi.x) & (p.y <= hi.y) & q.valid[i]) {
            $if (clipped) {
                ClippedOutline o = ct.seen_from(p);
                cand.inside = o.inside;
                cand.d2 = o.d2;
                cand.depth = o.depth;
                hit = o.any & (o.inside | (o.d2 < reach_px * reach_px));
            }
            $else { projected(p, cand, hit); };
        };
        $if (hit) { within(i, tri, cand); };
    }
}

// The same for each entry of list[begin, end).
template <typename Within>
void soft_scan(const BufferVar<gpu::TriSetup>& setups, const SoftClipSource* src, const BufferUInt& list,
               const UInt& begin, const UInt& end, const SoftQuad& q, const Float& reach_px, const Within& within) {
    $for (k, begin, end) { soft_scan_entry(setups, src, list.read(k), q, reach_px, within); };
}

// Every candidate: quad pixel i's are written to its own list (q.own), up to `capacity` of them, and counted on
// past it (more than `capacity`: the pixel loops over its whole tile instead, see soft_triangles).
inline void soft_select(const BufferVar<gpu::TriSetup>& setups, const SoftClipSource* src, const BufferUInt& list,
                        const UInt& begin, const UInt& end, const UInt& capacity, const Float& reach_px,
                        SoftQuad& q) {
    soft_scan(setups, src, list, begin, end, q, reach_px, [&](uint32_t i, const UInt& tri, const SoftCandidate&) {
        $if (q.n[i] < capacity) { list.write(q.own[i] + q.n[i] * q.own_stride, tri); };
        q.n[i] = q.n[i] + 1u;
    });
}

// The key a candidate is kept by (soft_select_heaviest, soft_select_held): soft_cover's logit and
// soft_log_weight, on the binning's projection. False (kw unset) for a fragment that weighs nothing: behind the
// near or the far plane at the pixel, or out of reach (D' = 0: the candidates' reach has a slack for rounding).
// Such a one, kept, would weigh log(1e-30) + z / gamma, the clamp's, and with a small gamma a triangle in front
// outranked the surface that covers the pixel, which then showed the background where K were full of them.
inline Bool soft_select_key(const SoftCandidate& c, const SoftSettings& st, const Float& width, Float& kw) {
    const float log_keep = std::log1p(-kSoftCutoff);
    Float logit = st.logit(c.inside, st.ndc_d2(c.d2, width));
    Float z = st.depth_weight(c.depth);
    Float covered = sigmoid(logit) - kSoftCutoff;
    kw = log(max(covered, 1e-30f)) - log_keep + z / st.gamma;
    return (c.depth >= st.near) & (c.depth <= st.far) & (covered > 0.0f);
}

// The two sides of a tile's list (TileBins: its triangles of one winding, then the other's), each with the
// largest 1 / w of its vertices (infinite for a triangle with a corner on or behind the camera's plane, whose
// part beyond the near plane reaches it). A triangle's key (soft_select_key) is at most z / gamma at its nearest
// vertex (D' <= 1, and its points' depths lie between its vertices'), so the selections that keep the K heaviest take
// the side whose nearest vertex is nearer first, and skip the other where that bound cannot beat the least of
// any quad pixel's K. With a small gamma, once a closed mesh's front has filled the K, that is its whole back.
// A side skipped saves its entries' tests, most of the held selection's time on lavapipe (its loop over a whole
// list with only the reads left in it took about a third of the kernel's time: app/GUIDE.md).
struct SoftSides {
    UInt middle;          // list index where the second side begins
    Float nearest[2];     // each side's largest 1 / w (0: none)
};

// soft_scan over list[begin, end) side by side as above. least(i): the least key quad pixel i keeps once its K
// are full (below any key before).
template <typename Least, typename Within>
void soft_scan_sides(const BufferVar<gpu::TriSetup>& setups, const SoftClipSource* src, const BufferUInt& list,
                     const UInt& begin, const UInt& end, const SoftSides& sides, const SoftQuad& q,
                     const Float& reach_px, const SoftSettings& st, const Least& least, const Within& within) {
    // This part's entries of each side, the nearer side first.
    Bool first_nearer = sides.nearest[0] >= sides.nearest[1];
    UInt lo[2] = {begin, max(begin, sides.middle)}, hi[2] = {min(end, sides.middle), end};
    UInt a_begin = ite(first_nearer, lo[0], lo[1]), a_end = ite(first_nearer, hi[0], hi[1]);
    UInt b_begin = ite(first_nearer, lo[1], lo[0]), b_end = ite(first_nearer, hi[1], hi[0]);
    Float b_nearest = ite(first_nearer, sides.nearest[1], sides.nearest[0]);
    UInt na = ite(a_end > a_begin, a_end - a_begin, 0u), nb = ite(b_end > b_begin, b_end - b_begin, 0u);
    $for (k, 0u, na + nb) {
        $if (k == na) {
            // The least any quad pixel keeps (pixels outside the image keep nothing and do not count) against
            // the bound of the second side's keys; the margin covers rounding between the two (a few ulps of
            // z / gamma).
            Float kept = 1e30f;
            for (uint32_t i = 0; i < kSoftQuad; ++i) kept = min(kept, ite(q.valid[i], least(i), 1e30f));
            Float bound = st.depth_weight(1.0f / b_nearest) / st.gamma;
            $if ((b_nearest > 0.0f) & (bound + 1e-4f * abs(bound) + 1e-2f < kept)) { $break; };
        };
        UInt at = ite(k < na, a_begin + k, b_begin + (k - na));
        soft_scan_entry(setups, src, list.read(at), q, reach_px, within);
    };
}

// With `render.soft.faces_per_pixel` = K (= capacity): each pixel keeps only the K candidates that weigh most in
// its blend, so its list never overflows and the blend loops over at most K. PyTorch3D keeps the K nearest
// by depth instead; at the scene format's gamma (0.1) depth differs little across a surface's front layer, and
// the nearest K are often the pixel's neighbours rather than the triangle that covers it. Here the key is the
// log weight of pass 2, log D' + z / gamma, from the binning's projection; ties go to the lower triangle index,
// so that the set does not depend on the tile list's order. The K are kept unsorted in the pixel's list with
// their keys in `key` (from at * K, in the same order); the least kept is tracked, and a candidate that weighs
// more replaces it and looks for the new least (K reads): a part's loops take at most (4K + 1) times its
// entries (SoftStage sizes the parts for it). Fragments that weigh nothing (soft_select_key: behind the near or
// the far plane at the pixel, or out of reach) are not kept. The tile list is taken side by side
// (soft_scan_sides).
inline void soft_select_heaviest(const BufferVar<gpu::TriSetup>& setups, const SoftClipSource* src,
                                 const BufferUInt& list,
                                 const BufferFloat& key, const UInt& begin, const UInt& end,
                                 const SoftSides& sides,
                                 const UInt& k_max, const Float& reach_px, const SoftSettings& st,
                                 const Float& width, SoftQuad& q) {
    auto lighter = [](const Float& ka, const UInt& ta, const Float& kb, const UInt& tb) {
        return (ka < kb) | ((ka == kb) & (ta > tb));
    };
    // Each pixel's least kept (the earlier parts' picks included).
    std::array<Float, kSoftQuad> least_key;
    std::array<UInt, kSoftQuad> least_tri, least_at;
    auto find_least = [&](uint32_t i) {
        least_key[i] = 1e30f;
        least_tri[i] = 0u;
        least_at[i] = 0u;
        $for (j, 0u, q.n[i]) {
            Float kj = key.read(q.at[i] * k_max + j);
            UInt t = list.read(q.own[i] + j * q.own_stride);
            $if (lighter(kj, t, least_key[i], least_tri[i])) {
                least_key[i] = kj;
                least_tri[i] = t;
                least_at[i] = j;
            };
        };
    };
    for (uint32_t i = 0; i < kSoftQuad; ++i) find_least(i);
    auto least = [&](uint32_t i) { return ite(q.n[i] < k_max, Float(-1e30f), least_key[i]); };
    soft_scan_sides(setups, src, list, begin, end, sides, q, reach_px, st, least,
                    [&](uint32_t i, const UInt& tri, const SoftCandidate& c) {
        Float kw;
        $if (soft_select_key(c, st, width, kw)) {
            UInt base = q.at[i] * k_max;
            $if (q.n[i] < k_max) {
                list.write(q.own[i] + q.n[i] * q.own_stride, tri);
                key.write(base + q.n[i], kw);
                $if (lighter(kw, tri, least_key[i], least_tri[i])) {
                    least_key[i] = kw;
                    least_tri[i] = tri;
                    least_at[i] = q.n[i];
                };
                q.n[i] = q.n[i] + 1u;
            }
            $elif (lighter(least_key[i], least_tri[i], kw, tri)) {
                list.write(q.own[i] + least_at[i] * q.own_stride, tri);
                key.write(base + least_at[i], kw);
                find_least(i);
            };
        };
    });
}

// The same K heaviest for K up to kSoftHeldFaces (K fixed when the kernel is recorded): each pixel's K are
// held in registers, sorted by weight, and a candidate that weighs more than the least is inserted in order
// (K compares and selects, unrolled, no loop and no memory). soft_select_heaviest's look for the new least, K
// reads of memory in a loop, was half of its time on lavapipe (which runs a branch for every group of 8 that
// reaches it): 30.6 against 16 ms at 5k/256^2 with it stubbed out. They are written to the pixel's list in
// order, heaviest first, at the end (read back at the start of a later part); a part takes one iteration an
// entry, as soft_select. Like soft_select_heaviest it takes the tile list side by side (soft_scan_sides).
constexpr uint32_t kSoftHeldFaces = 16;
inline void soft_select_held(const BufferVar<gpu::TriSetup>& setups, const SoftClipSource* src, const BufferUInt& list,
                             const BufferFloat& key,
                             const UInt& begin, const UInt& end, const SoftSides& sides,
                             uint32_t faces, const Float& reach_px, const SoftSettings& st, const Float& width,
                             SoftQuad& q) {
    auto heavier = [](const Float& ka, const UInt& ta, const Float& kb, const UInt& tb) {
        return (ka > kb) | ((ka == kb) & (ta < tb));
    };
    // Empty places weigh less than any fragment (a kept fragment's key is at least log(1e-30), about -69).
    const float empty_key = -1e30f;
    std::array<std::vector<Float>, kSoftQuad> keys;
    std::array<std::vector<UInt>, kSoftQuad> tris;
    for (uint32_t i = 0; i < kSoftQuad; ++i) {
        keys[i].resize(faces);
        tris[i].resize(faces);
        for (uint32_t j = 0; j < faces; ++j) {
            keys[i][j] = empty_key;
            tris[i][j] = ~0u;
            $if (j < q.n[i]) {
                keys[i][j] = key.read(q.at[i] * faces + j);
                tris[i][j] = list.read(q.own[i] + j * q.own_stride);
            };
        }
    }
    auto keep = [&](uint32_t i, const UInt& tri, const SoftCandidate& c) {
        Float kw;
        Bool keeps = soft_select_key(c, st, width, kw);
        $if (keeps & heavier(kw, tri, keys[i][faces - 1], tris[i][faces - 1])) {
            // From the old values: the places the candidate is heavier than (a suffix of the sorted K).
            std::vector<Bool> above;
            for (uint32_t j = 0; j < faces; ++j) above.push_back(heavier(kw, tri, keys[i][j], tris[i][j]));
            for (uint32_t j = faces - 1; j > 0; --j) {
                keys[i][j] = ite(above[j - 1], keys[i][j - 1], ite(above[j], kw, keys[i][j]));
                tris[i][j] = ite(above[j - 1], tris[i][j - 1], ite(above[j], tri, tris[i][j]));
            }
            keys[i][0] = ite(above[0], kw, keys[i][0]);
            tris[i][0] = ite(above[0], tri, tris[i][0]);
            q.n[i] = min(q.n[i] + 1u, faces);
        };
    };
    soft_scan_sides(setups, src, list, begin, end, sides, q, reach_px, st,
                    [&](uint32_t i) { return keys[i][faces - 1]; },
                    keep);
    for (uint32_t i = 0; i < kSoftQuad; ++i)
        for (uint32_t j = 0; j < faces; ++j)
            $if (j < q.n[i]) {
                key.write(q.at[i] * faces + j, keys[i][j]);
                list.write(q.own[i] + j * q.own_stride, tris[i][j]);
            };
}

} // namespace adjoint::app
