// adjoint-optimize's --out folder: locked for the run, checked before any work, and --resume's checks.
#include "run/out_folder.h"

#include <adjoint/app/checkpoint.h>
#include <adjoint/app/image_io.h>
#include <adjoint/app/loss_log.h>
#include <adjoint/app/parameter_kinds.h>
#include <adjoint/app/params_file.h>
#include <adjoint/core/hash.h>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace adjoint::app {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// 2: numbers compared as doubles (14 and 14.0 are one value: a respelled file was refused).
constexpr int fingerprint_version = 2;
// The files a run writes whatever its scene; their presence marks a folder as holding a run's outputs.
constexpr const char* run_outputs[] = {"checkpoint.bin", "params.json", "loss.csv", "final.png",
                                       "report.png",     "target.png",  "start.png"};

// The parts of a scene file compared on --resume, each by its hash: every top-level key, one level below for
// objects and arrays ("camera.fov_y", "lights[0]"), so a refusal can say what was edited. optimize.iterations
// is left out: --iters may change it on a resume as well.
void add_parts(const Json& j, const std::string& name, int depth, Json& parts) {
    const bool expand = (j.is_object() && depth < 2) || (j.is_array() && depth == 1);
    if (expand && !j.empty()) {
        size_t i = 0;
        for (const auto& [key, value] : j.items()) {
            const std::string child = j.is_array() ? name + "[" + std::to_string(i++) + "]"
                                                   : (name.empty() ? key : name + "." + key);
            add_parts(value, child, depth + 1, parts);
        }
        return;
    }
    if (name != "optimize.iterations") parts[name.empty() ? "(the file)" : name] = hex64(hash_string(j.dump()));
}

// The file without its comments (keys that begin with '_', anywhere): editing one changes nothing the run reads.
// Numbers as doubles: a number without a fraction written as a float is that integer (scene-format.md), and 14,
// 14.0 and 1.4e1 compare as one.
Json uncommented(const Json& j) {
    if (j.is_array()) {
        Json out = Json::array();
        for (const Json& v : j) out.push_back(uncommented(v));
        return out;
    }
    if (j.is_number()) return Json(j.get<double>());
    if (!j.is_object()) return j;
    Json out = Json::object();
    for (const auto& [key, value] : j.items())
        if (key.empty() || key[0] != '_') out[key] = uncommented(value);
    return out;
}

// "lights[0] changed, meshes/ball.obj added": the keys whose hashes differ, at most six of them named.
std::vector<std::string> differences(const Json& was, const Json& now) {
    std::vector<std::string> out;
    for (const auto& [key, hash] : was.items())
        out.push_back(!now.contains(key) ? key + " removed" : now[key] != hash ? key + " changed" : "");
    for (const auto& [key, hash] : now.items())
        if (!was.contains(key)) out.push_back(key + " added");
    std::erase(out, std::string());
    return out;
}

std::string joined(const std::vector<std::string>& items, size_t most = 6) {
    std::string s;
    for (size_t i = 0; i < items.size() && i < most; ++i) s += (i ? ", " : "") + items[i];
    if (items.size() > most) s += " and " + std::to_string(items.size() - most) + " more";
    return s;
}

// Runs a read of one of the folder's files; its failure (missing, damaged, cut short) is the input's fault
// under --resume: a SceneError that names the file first, as every error does ("<file>: --resume: <what>").
template <typename Read>
auto resume_read(const fs::path& file, const Read& read) {
    try {
        return read();
    } catch (const SceneError&) {
        throw;
    } catch (const Error& e) {
        std::string what = e.what();
        const std::string named = file.string() + ": ";
        if (what.rfind(named, 0) == 0) what.erase(0, named.size());
        throw SceneError(file.string(), "", "--resume: " + what);
    }
}

std::string resolution_text(const Json& r) {
    return r.is_array() && r.size() == 2 ? r[0].dump() + "x" + r[1].dump() : r.dump();
}

// The checkpoint's metadata against this run's fingerprint; the checkpoint's seed when it fits.
uint64_t check_metadata(const fs::path& ck, const std::string& metadata, const OptimizeOptions& o, const Scene& scene,
                        const Json& now) {
    const Json was = Json::parse(metadata, nullptr, false);
    if (was.is_discarded() || !was.is_object() || was.value("fingerprint", Json()) != fingerprint_version ||
        !was.contains("scene") || !was.contains("files") || !was["seed"].is_number_unsigned())
        throw SceneError(ck.string(), "", "--resume: the checkpoint's record of its scene is not one this "
                                          "adjoint-optimize compares (an older one wrote it); start a new run "
                                          "(--force)");
    if (was["resolution"] != now["resolution"])
        throw SceneError(o.resolution ? "" : scene.display_name, o.resolution ? "--resolution" : "camera.resolution",
                         "--resume: the checkpoint's run renders at " + resolution_text(was["resolution"]) + ", not " +
                             resolution_text(now["resolution"]) + "; resume it at its own resolution");
    const uint64_t seed = was["seed"].get<uint64_t>();
    if (o.seed && *o.seed != seed)
        throw SceneError("", "--seed", "--resume: the checkpoint's run used seed " + std::to_string(seed) +
                                           "; a resumed run continues its random state: leave --seed out");
    std::vector<std::string> changed = differences(was["scene"], now["scene"]);
    for (const std::string& f : differences(was["files"], now["files"])) changed.push_back("file " + f);
    if (changed.empty() && was["parameters"] != now["parameters"]) changed.push_back("the free parameters");
    if (!changed.empty())
        throw SceneError(scene.display_name, "", "--resume: the scene differs from the one the checkpoint in " +
                                                     ck.parent_path().string() + " was written for (" + joined(changed) +
                                                     "); resume with that scene, or start a new run (--force)");
    return seed;
}

} // namespace

std::vector<std::string> loss_error_columns(const std::vector<std::pair<std::string, ParameterKind>>& parameters) {
    std::vector<std::string> columns;
    for (const auto& [path, kind] : parameters)
        columns.push_back(LossLog::error_column(path, error_unit_name(error_unit(kind_info(kind)))));
    return columns;
}

std::vector<std::string> loss_error_columns(const Scene& scene) {
    std::vector<std::pair<std::string, ParameterKind>> parameters;
    if (scene.optimize)
        for (const auto& p : scene.optimize->parameters) parameters.emplace_back(p.path, p.kind);
    return loss_error_columns(parameters);
}

namespace {

// Everything --resume reads, read and checked before any work; the scene takes the checkpoint's seed.
void check_resume(const fs::path& dir, const OptimizeOptions& o, Scene& scene, std::string& fingerprint) {
    const fs::path ck = dir / "checkpoint.bin";
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(ck, ec)))
        throw SceneError(ck.string(), "", "--resume: there is no checkpoint to resume from");
    const Checkpoint c = resume_read(ck, [&] { return read_checkpoint(ck); });
    Json now = Json::parse(fingerprint);
    const uint64_t seed = check_metadata(ck, c.metadata, o, scene, now);
    // A run asked to end before the checkpoint's iteration would report the checkpoint's values as done with
    // fewer iterations than it ran: refused. Asked to end at it: nothing left to run, the outputs rewritten.
    if (scene.optimize->iterations < c.iteration)
        throw SceneError(o.iters ? "" : scene.display_name, o.iters ? "--iters" : "optimize.iterations",
                         "--resume: the checkpoint holds " + std::to_string(c.iteration) +
                             " iterations, more than the " + std::to_string(scene.optimize->iterations) +
                             " asked for; give --iters " +
                             std::to_string(c.iteration) + " or more to continue it");
    scene.optimize->seed = seed;
    now["seed"] = seed;
    fingerprint = now.dump();

    const fs::path csv = dir / "loss.csv";
    std::vector<std::string> columns;
    const std::vector<LossRow> rows =
        resume_read(csv, [&] { return LossLog::parse(read_file(csv), csv.string(), &columns); });
    if (columns != loss_error_columns(scene))
        throw SceneError(csv.string(), "", "--resume: its error columns are not one per free parameter of this "
                                           "scene (written by another version or for other parameters)");
    const int64_t last = int64_t(c.iteration) - 1;
    int64_t reached = -1;
    for (const LossRow& row : rows)
        if (row.iteration <= last) reached = row.iteration;
    if (reached != last)
        throw SceneError(csv.string(), "", "--resume: its rows end at " +
                                               (reached < 0 ? std::string("(none)") : "iteration " + std::to_string(reached)) +
                                               " but the checkpoint's last is iteration " + std::to_string(last) +
                                               " (rows count from 0)");
    for (const char* name : {"target.png", "start.png"}) {
        const Image image = resume_read(dir / name, [&] { return read_png_linear(dir / name); });
        if (uint32_t(image.width) != scene.camera.width || uint32_t(image.height) != scene.camera.height)
            throw SceneError((dir / name).string(), "", "--resume: it is " + std::to_string(image.width) + "x" +
                                                            std::to_string(image.height) + " but the run renders at " +
                                                            std::to_string(scene.camera.width) + "x" +
                                                            std::to_string(scene.camera.height));
    }
}

// The run's outputs already in `dir`: run_outputs in their order, then the free textures' files, render_*.png (with
// --save-every) and profile.txt (with --profile), sorted. A name taken by a symlink, a FIFO, a device or a folder:
// refused, as the write would replace it.
std::vector<std::string> outputs_present(const fs::path& dir, const Scene& scene, bool profile, bool snapshots) {
    std::vector<std::string> textures;   // texture parameters' files begin with their sanitized path
    for (const auto& p : scene.optimize->parameters)
        if (kind_info(p.kind).storage == ParameterStorage::texture)
            textures.push_back(texture_file_name(p.path, false, false));
    std::vector<std::string> others;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        const auto starts = [&](const std::string& s) { return name.compare(0, s.size(), s) == 0; };
        const auto ends = [&](const std::string& s) {
            return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
        };
        bool ours = std::find(std::begin(run_outputs), std::end(run_outputs), name) != std::end(run_outputs) ||
                    (snapshots && starts("render_") && ends(".png")) || (profile && name == "profile.txt");
        for (const std::string& t : textures) ours = ours || (starts(t.substr(0, t.size() - 3)) && (ends(".png") || ends(".hdr")));
        if (!ours) continue;
        try {
            check_replaceable(entry.path());
        } catch (const Error& e) {
            throw SceneError("", "--out", std::string(e.what()) + "; outputs are written only as regular files");
        }
        others.push_back(name);
    }
    std::vector<std::string> found;
    for (const char* name : run_outputs)
        if (const auto it = std::find(others.begin(), others.end(), name); it != others.end()) {
            found.push_back(name);
            others.erase(it);
        }
    std::sort(others.begin(), others.end());
    found.insert(found.end(), others.begin(), others.end());
    return found;
}

} // namespace

// Two free parameters whose outputs' names come out the same once sanitized (materials "a,b" and "a_b"): one
// texture file, or one loss.csv column, would hold both, and params.json name it for each. Refused.
void check_distinct_output_names(const Scene& scene) {
    const auto& parameters = scene.optimize->parameters;
    const std::vector<std::string> columns = loss_error_columns(scene);
    for (size_t i = 0; i < parameters.size(); ++i)
        for (size_t j = 0; j < i; ++j) {
            const bool textures = kind_info(parameters[i].kind).storage == ParameterStorage::texture &&
                                  kind_info(parameters[j].kind).storage == ParameterStorage::texture;
            const std::string file = texture_file_name(parameters[i].path, false, false);
            const bool same_file = textures && file == texture_file_name(parameters[j].path, false, false);
            if (same_file || columns[i] == columns[j])
                throw SceneError(scene.display_name, "optimize.parameters",
                                 "\"" + parameters[j].path + "\" and \"" + parameters[i].path + "\" would share " +
                                     (same_file ? "the output file " + file +
                                                      " (a file's name keeps letters, digits, '.', '_' and '-' only)"
                                                : "the loss.csv column " + columns[i] +
                                                      " (a column's name writes ',', '\"' and line breaks as '_')") +
                                     "; rename one");
        }
}

std::string scene_fingerprint(const Scene& scene, const std::vector<ReadRecorder::Entry>& reads) {
    Json j;
    j["fingerprint"] = fingerprint_version;
    Json parts = Json::object(), files = Json::object();
    if (!scene.source_file.empty()) {
        const std::string text = read_file(scene.source_file);
        const Json tree = Json::parse(text, nullptr, false, true);
        if (tree.is_discarded()) parts["(the file)"] = hex64(hash_string(text));
        else add_parts(uncommented(tree), "", 0, parts);
    }
    for (size_t i = 0; i < reads.size(); ++i)
        if (!(i == 0 && reads[i].path == scene.source_file)) files[reads[i].shown] = hex64(reads[i].hash);
    j["scene"] = parts;
    j["files"] = files;
    std::vector<std::string> paths;
    for (const auto& p : scene.optimize->parameters) paths.push_back(p.path);
    j["parameters"] = paths;
    j["resolution"] = {scene.camera.width, scene.camera.height};
    j["seed"] = scene.optimize->seed;
    return j.dump();
}

std::string scene_fingerprint(const Scene& scene) {
    std::vector<ReadRecorder::Entry> reads;
    if (!scene.source_file.empty()) {
        ReadRecorder recorder;
        (void)load_scene(scene.source_file);
        reads = recorder.entries();
    }
    return scene_fingerprint(scene, reads);
}

void refuse_another_runs_outputs(const fs::path& dir, const Scene& scene, bool allowed, bool profile,
                                 bool snapshots, bool resumable) {
    // Any file the run would write over counts: a texture file left alone by an earlier run was overwritten.
    const std::vector<std::string> found = outputs_present(dir, scene, profile, snapshots);
    if (allowed || found.empty()) return;
    throw SceneError("", "--out", dir.string() + " holds another run's outputs (" + joined(found, 7) + "); give " +
                                      (resumable ? "--resume to continue that run, " : "") +
                                      "--force to write over it, or another folder");
}

std::unique_ptr<FolderLock> prepare_out_folder(const OptimizeOptions& o, Scene& scene, std::string& fingerprint,
                                               bool create) {
    check_distinct_output_names(scene);
    const fs::path& dir = o.out;
    std::unique_ptr<FolderLock> lock;
    try {
        std::error_code ec;
        if (!create && !fs::exists(dir, ec)) {
            if (o.resume) throw SceneError((dir / "checkpoint.bin").string(), "", "--resume: there is no checkpoint to resume from");
            return nullptr;   // nothing to check yet: the folder is made (and checked) once the run is ready
        }
        if (create) ensure_directory(dir);
        else if (!fs::is_directory(dir, ec)) fail("cannot create folder ", dir.string(), ": a file of that name exists");
        lock = std::make_unique<FolderLock>(dir);
    } catch (const SceneError&) {
        throw;
    } catch (const Error& e) {
        throw SceneError("", "--out", e.what());
    }
    refuse_another_runs_outputs(dir, scene, o.resume || o.force, o.profile, o.save_every.has_value(), true);
    if (o.resume) check_resume(dir, o, scene, fingerprint);
    return lock;
}

} // namespace adjoint::app
