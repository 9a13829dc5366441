// PLY meshes: the same quad-faced cube in ASCII, binary little-endian and binary big-endian reads into the same
// mesh (positions, faces triangulated as OBJ's are, sRGB-decoded 8-bit colours, flipped texture coordinates, computed
// normals), 16-bit colours span their range, extra elements and properties are read past, and broken files are
// refused naming the file.
#include "app/scene_fixture.h"

#include <adjoint/app/image_io.h>

#include <bit>
#include <cstring>

namespace adjoint::app::test {

namespace {

struct Vertex {
    float x, y, z;
    uint8_t r, g, b;
    float s, t;
};

// The cube of side 2, one colour and texture coordinate per corner, and its 6 quads (counter-clockwise).
const Vertex kCube[8] = {{-1, -1, -1, 255, 0, 0, 0, 0},   {1, -1, -1, 0, 255, 0, 1, 0},   {1, 1, -1, 0, 0, 255, 1, 1},
                         {-1, 1, -1, 128, 128, 128, 0, 1}, {-1, -1, 1, 10, 20, 30, 0, 0}, {1, -1, 1, 40, 50, 60, 1, 0},
                         {1, 1, 1, 70, 80, 90, 1, 1},      {-1, 1, 1, 200, 210, 220, 0, 1}};
const int kQuads[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 4, 7, 3}, {1, 2, 6, 5}, {0, 1, 5, 4}, {3, 7, 6, 2}};

std::string header(const std::string& format) {
    return "ply\nformat " + format + " 1.0\ncomment made by a test\nelement vertex 8\nproperty float x\n"
           "property float y\nproperty float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\n"
           "property float s\nproperty float t\nelement face 6\nproperty uchar flags\n"
           "property list uchar int vertex_indices\nelement edge 1\nproperty int vertex1\nproperty int vertex2\n"
           "end_header\n";
}

std::string ascii_cube() {
    std::string s = header("ascii");
    for (const Vertex& v : kCube)
        s += std::to_string(v.x) + " " + std::to_string(v.y) + " " + std::to_string(v.z) + " " + std::to_string(v.r) +
             " " + std::to_string(v.g) + " " + std::to_string(v.b) + " " + std::to_string(v.s) + " " +
             std::to_string(v.t) + "\n";
    for (const auto& q : kQuads) s += "7 4 " + std::to_string(q[0]) + " " + std::to_string(q[1]) + " " +
                                      std::to_string(q[2]) + " " + std::to_string(q[3]) + "\n";
    return s + "0 1\n";
}

template <typename T>
void put(std::string& out, T value, bool big) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    if (big == (std::endian::native == std::endian::little)) std::reverse(raw, raw + sizeof(T));
    out.append(raw, sizeof(T));
}

std::string binary_cube(bool big) {
    std::string s = header(big ? "binary_big_endian" : "binary_little_endian");
    for (const Vertex& v : kCube) {
        for (float f : {v.x, v.y, v.z}) put(s, f, big);
        for (uint8_t c : {v.r, v.g, v.b}) put(s, c, big);
        put(s, v.s, big), put(s, v.t, big);
    }
    for (const auto& q : kQuads) {
        put(s, uint8_t(7), big), put(s, uint8_t(4), big);
        for (int i : q) put(s, int32_t(i), big);
    }
    put(s, int32_t(0), big), put(s, int32_t(1), big);
    return s;
}

} // namespace

class PlyMeshes : public SceneFiles {
protected:
    Mesh load_ply(const std::string& bytes) {
        write("meshes/cube.ply", bytes);
        Json j = minimal_scene();
        j["meshes"][0]["file"] = "meshes/cube.ply";
        j["meshes"][0]["vertex_colors"] = true;
        return load(j).meshes.at(0);
    }
    std::string error_of_ply(const std::string& bytes, const char* material = "base") {
        write("meshes/bad.ply", bytes);
        Json j = minimal_scene();
        j["meshes"][0]["file"] = "meshes/bad.ply";
        j["meshes"][0]["material"] = material;
        return error_of(j);
    }
};

TEST_F(PlyMeshes, AsciiAndBothBinariesReadTheSameCube) {
    const Mesh ascii = load_ply(ascii_cube());
    ASSERT_EQ(ascii.positions.size(), 8u);
    // 6 quads, each split along a diagonal as an OBJ quad is (a square's tie: its corners 1 and 3, counting from 0).
    ASSERT_EQ(ascii.triangles.size(), 12u);
    EXPECT_EQ(ascii.triangles[0], uint3(0, 3, 1));
    EXPECT_EQ(ascii.triangles[1], uint3(3, 2, 1));
    EXPECT_TRUE(ascii.has_colors && ascii.has_texcoords && ascii.normals_computed);
    for (size_t i = 0; i < 8; ++i) {
        EXPECT_EQ(ascii.positions[i], float3(kCube[i].x, kCube[i].y, kCube[i].z));
        EXPECT_FLOAT_EQ(ascii.colors[i].x, srgb_to_linear(kCube[i].r / 255.0f));
        EXPECT_FLOAT_EQ(ascii.colors[i].z, srgb_to_linear(kCube[i].b / 255.0f));
        EXPECT_EQ(ascii.texcoords[i], float2(kCube[i].s, 1.0f - kCube[i].t));
        EXPECT_EQ(ascii.position_ids[i], i);
        // A cube corner's area-weighted normal is unit and points out, near its diagonal (the diagonals split the
        // quads unevenly around a corner).
        const float3 n = ascii.normals[i];
        EXPECT_NEAR(length3(n), 1.0f, 1e-6f);
        EXPECT_GT((n.x * kCube[i].x + n.y * kCube[i].y + n.z * kCube[i].z) / std::sqrt(3.0f), 0.9f);
    }
    for (bool big : {false, true}) {
        SCOPED_TRACE(big ? "big-endian" : "little-endian");
        const Mesh binary = load_ply(binary_cube(big));
        EXPECT_EQ(binary.positions, ascii.positions);
        EXPECT_EQ(binary.triangles, ascii.triangles);
        EXPECT_EQ(binary.colors, ascii.colors);
        EXPECT_EQ(binary.texcoords, ascii.texcoords);
        EXPECT_EQ(binary.normals, ascii.normals);
    }
}

TEST_F(PlyMeshes, GivenNormalsAreKeptAndVerticesAreParameters) {
    std::string s = "ply\nformat ascii 1.0\nelement vertex 3\nproperty double x\nproperty double y\nproperty double z\n"
                    "property float nx\nproperty float ny\nproperty float nz\nelement face 1\n"
                    "property list uchar uint vertex_index\nend_header\n"
                    "0 0 0 0 0 2\n1 0 0 0 0 2\n0 1 0 0 0 2\n3 0 1 2\n";
    write("meshes/tri.ply", s);
    Json j = minimal_scene();
    j["meshes"][0]["file"] = "meshes/tri.ply";
    j["optimize"] = {{"parameters", {{"meshes.cube.vertices", {{"perturb", 0.1}}}}}};
    const Scene scene = load(j);
    const Mesh& m = scene.meshes[0];
    EXPECT_FALSE(m.normals_computed || m.has_colors || m.has_texcoords);
    EXPECT_EQ(m.normals[1], float3(0, 0, 1));
    EXPECT_EQ(scene.optimize->parameters[0].size, 9u);   // one OBJ position per PLY vertex
}

// Integer colours span their type's range: a ushort colour of 65535 is full (it was divided by 255: every
// colour above 255 came out white), 32768 is half of it before the sRGB decoding; `diffuse_red` and its kin
// (assimp's pond.0.ply) are colours too.
TEST_F(PlyMeshes, IntegerColoursSpanTheirTypesRange) {
    for (const char* name : {"", "diffuse_"}) {
        const std::string n = name;
        const Mesh m = load_ply("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                                "property float z\nproperty ushort " + n + "red\nproperty ushort " + n + "green\n"
                                "property ushort " + n + "blue\nelement face 1\n"
                                "property list uchar int vertex_indices\n"
                                "end_header\n0 0 0 65535 0 32768\n1 0 0 255 65535 0\n0 1 0 0 0 0\n3 0 1 2\n");
        SCOPED_TRACE(n + "red");
        ASSERT_TRUE(m.has_colors);
        EXPECT_FLOAT_EQ(m.colors[0].x, 1.0f);
        EXPECT_FLOAT_EQ(m.colors[0].z, srgb_to_linear(32768.0f / 65535.0f));
        EXPECT_FLOAT_EQ(m.colors[1].x, srgb_to_linear(255.0f / 65535.0f));
        EXPECT_FLOAT_EQ(m.colors[1].y, 1.0f);
    }
}

// A concave face is triangulated in its plane as an OBJ face is (it was a fan from its first corner, which covers
// area outside a U and misses some inside): the U of area 7 gives 6 triangles of total area 7, facing +z.
TEST_F(PlyMeshes, AConcaveFaceIsCoveredExactly) {
    const float u[8][2] = {{0, 0}, {3, 0}, {3, 3}, {2, 3}, {2, 1}, {1, 1}, {1, 3}, {0, 3}};
    std::string ply = "ply\nformat ascii 1.0\nelement vertex 8\nproperty float x\nproperty float y\n"
                      "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
    for (const auto& c : u) ply += std::to_string(c[0]) + " " + std::to_string(c[1]) + " 0\n";
    const Mesh m = load_ply(ply + "8 0 1 2 3 4 5 6 7\n");
    ASSERT_EQ(m.triangles.size(), 6u);
    double area = 0;
    for (const uint3& t : m.triangles) {
        const float3 a = m.positions[t.x], b = m.positions[t.y], c = m.positions[t.z];
        const double z = double(b.x - a.x) * (c.y - a.y) - double(b.y - a.y) * (c.x - a.x);
        EXPECT_GT(z, 0.0);   // facing +z, as the face winds
        area += z / 2;
        const float cx = (a.x + b.x + c.x) / 3, cy = (a.y + b.y + c.y) / 3;
        EXPECT_FALSE(cx > 1 && cx < 2 && cy > 1) << "a triangle covers the U's gap";
    }
    EXPECT_NEAR(area, 7.0, 1e-5);
}

TEST_F(PlyMeshes, BrokenFilesAreNamed) {
    const std::string at = "scene.json: meshes[0].file: meshes/bad.ply: ";
    EXPECT_EQ(error_of_ply("plx\n"), at + "not a PLY file (it does not start with \"ply\")");
    EXPECT_EQ(error_of_ply("ply\nformat ascii 1.0\nelement vertex 3\n"), at + "the header has no end_header line");
    EXPECT_EQ(error_of_ply("ply\nformat ebcdic 1.0\nend_header\n"), at + "header line 2: unknown format \"ebcdic\"");
    EXPECT_EQ(error_of_ply("ply\nformat ascii 1.0\nelement vertex 1\nproperty float128 x\nend_header\n"),
              at + "header line 4: unknown property type \"float128\"");
    const std::string xyz = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                            "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
    EXPECT_EQ(error_of_ply(xyz + "0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n"), at + "face 0 refers to vertex 7 of 3");
    // A line with more values than its item's properties (they were read as the next face, the real next line
    // dropped), and a fractional index in a float list (truncated to a vertex); a wrapped item still reads.
    std::string two = xyz;
    two.replace(two.find("element face 1"), 14, "element face 2");
    EXPECT_EQ(error_of_ply(two + "0 0 0\n1 0 0\n0 1 0\n3 0 1 2 3 0 1 2\n3 0 2 1\n"),
              at + "face 0: its values and the header's properties do not line up (a line holds more or fewer values "
                   "than the header gives an item)");
    EXPECT_EQ(error_of_ply(xyz + "0 0 0 1\n1 0 0\n0 1 0\n3 0 1 2\n"),
              at + "vertex 0: its values and the header's properties do not line up (a line holds more or fewer "
                   "values than the header gives an item)");
    // A line short of a value takes the next line's first: named as not lining up, not as a line of more.
    EXPECT_NE(error_of_ply(xyz + "0 0\n1 0 0\n0 1 0\n3 0 1 2\n").find("more or fewer"), std::string::npos);
    EXPECT_EQ(load_ply(two + "0 0 0\n1 0 0\n0 1 0\n3 0 1\n2\n3 0 2 1  \r\n").triangles.size(), 2u);
    std::string fractional = xyz;
    fractional.replace(fractional.find("uchar int"), 9, "uchar float");
    EXPECT_EQ(error_of_ply(fractional + "0 0 0\n1 0 0\n0 1 0\n3 0.5 1 2\n"), at + "face 0 refers to vertex 0.5 of 3");
    EXPECT_EQ(error_of_ply(xyz + "0 0 0\n1 0 0\n0 1 0\n2 0 1\n"), at + "face 0 has 2 corners (3 or more)");
    // A signed list count below zero, in the faces and in an element read past (it was taken as 2^64 - 1).
    std::string signed_count = xyz;
    signed_count.replace(signed_count.find("list uchar"), 10, "list char");
    EXPECT_EQ(error_of_ply(signed_count + "0 0 0\n1 0 0\n0 1 0\n-1 0 1 2\n"),
              at + "face 0: its list vertex_indices has a negative length (-1)");
    // A count written inf (size_t of inf is undefined: it read as 0 corners).
    EXPECT_EQ(error_of_ply(xyz + "0 0 0\n1 0 0\n0 1 0\ninf 0 1 2\n"),
              at + "face 0: its list vertex_indices has a length that is not a count (inf)");
    std::string skipped = xyz;
    skipped.replace(skipped.find("element face"), 0, "element other 1\nproperty list short int ids\n");
    EXPECT_EQ(error_of_ply(skipped + "0 0 0\n1 0 0\n0 1 0\n-3 1\n3 0 1 2\n"),
              at + "other 0: its list ids has a negative length (-3)");
    std::string long_face = "2000";
    for (int i = 0; i < 2000; ++i) long_face += " " + std::to_string(i % 3);
    EXPECT_EQ(error_of_ply(xyz + "0 0 0\n1 0 0\n0 1 0\n" + long_face + "\n"),
              at + "face 0 has 2000 corners (at most 1024)");
    EXPECT_EQ(error_of_ply("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                           "property float z\nelement tristrips 1\nproperty list int int vertex_indices\nend_header\n"
                           "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"),
              "scene.json: meshes[0].file: meshes/bad.ply has no faces (its tristrips element is not read: faces "
              "only)");
    EXPECT_EQ(error_of_ply(xyz + "0 0 0\n1 nan 0\n0 1 0\n3 0 1 2\n"),
              at + "vertex 1 has a position that is not a finite float");
    const std::string body = "0 0 0\n1 0 0\n0 1 z\n";
    EXPECT_EQ(error_of_ply(xyz + body), at + "expected a number at byte " + std::to_string(xyz.size() + body.find('z')));
    EXPECT_EQ(error_of_ply(xyz + "0 0 0\n1 0 0\n"), at + "ends early");
    std::string truncated = binary_cube(false);
    truncated.resize(truncated.size() - 20);
    EXPECT_EQ(error_of_ply(truncated), at + "ends early");
    EXPECT_EQ(error_of_ply("ply\nformat binary_little_endian 1.0\nelement vertex 4000000000\nproperty float x\n"
                           "end_header\n"),
              at + "element vertex claims 4000000000 items, more than the file holds");
    write("meshes/cube.stl", "solid cube\n");
    Json stl = minimal_scene();
    stl["meshes"][0]["file"] = "meshes/cube.stl";
    EXPECT_EQ(error_of(stl), "scene.json: meshes[0].file: meshes/cube.stl: not a mesh format Adjoint reads (by its "
                             "extension: .obj, .ply, .gltf, .glb)");
    EXPECT_EQ(error_of_ply(xyz + "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n", "mtl"),
              "scene.json: meshes[0].material: \"mtl\" names an OBJ's MTL materials; meshes/bad.ply is PLY: name one "
              "of `materials`");
}

} // namespace adjoint::app::test
