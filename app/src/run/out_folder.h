// adjoint-optimize's --out folder: its lock, the refusals before any work (busy, another run's outputs, outputs
// that are not regular files) and --resume's checks of the checkpoint and the scene's content.
#pragma once
#include <adjoint/app/atomic_file.h>
#include <adjoint/app/cli.h>
#include <adjoint/app/scene.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace adjoint::app {

// The checkpoint's metadata for a run of `scene`: a hash of each part of the scene file (its top-level keys, and
// one level below), of every other file it named (`reads`, as ReadRecorder saw the load), the free parameters,
// the resolution and the seed. JSON text.
std::string scene_fingerprint(const Scene& scene, const std::vector<ReadRecorder::Entry>& reads);
// The same for a scene loaded elsewhere (the studio): its file is loaded again to learn what it names.
std::string scene_fingerprint(const Scene& scene);

// loss.csv's error columns for these free parameters (path, kind), in file order: LossLog::error_column with
// each kind's error unit.
std::vector<std::string> loss_error_columns(const std::vector<std::pair<std::string, ParameterKind>>& parameters);
std::vector<std::string> loss_error_columns(const Scene& scene);

// Refuses (SceneError) two free parameters whose outputs' names come out the same once sanitized (one texture
// file, or one loss.csv column, for both); prepare_out_folder and the studio's outputs call it.
void check_distinct_output_names(const Scene& scene);

// Locks o.out and checks it for a run (a SceneError naming the folder, the file or the option otherwise, so
// the program exits 2 with nothing written): not in use by another run; no output name taken by something
// that is not a regular file; no other run's outputs unless --resume or --force; with --resume, a checkpoint,
// loss.csv, target.png and start.png that are whole and fit this scene (`fingerprint`): its content, seed and
// resolution; without --seed, the scene takes the checkpoint's seed. With `create` false a folder that does
// not exist yet is left alone (nullptr: call again with `create` true once the run is ready to write).
std::unique_ptr<FolderLock> prepare_out_folder(const OptimizeOptions& o, Scene& scene, std::string& fingerprint,
                                               bool create);

} // namespace adjoint::app
