# The fuzz targets in the test suite: each built with the project's compiler (and its sanitizers, in a sanitizer
# build) with replay_main.cpp instead of libFuzzer, and run over its corpus as FuzzCorpus.<target>: every CI run
# replays what libFuzzer kept. Fuzzing itself needs clang and libFuzzer (tools/fuzz/run.sh, ADJOINT_FUZZ).
set(fuzz_dir ${PROJECT_SOURCE_DIR}/tools/fuzz)
foreach(target gltf ply views scene_json obj_mtl image params_json checkpoint)
  add_executable(fuzz_replay_${target} ${fuzz_dir}/fuzz_${target}.cpp ${fuzz_dir}/replay_main.cpp)
  target_include_directories(fuzz_replay_${target} PRIVATE ${PROJECT_SOURCE_DIR}/app/src)   # io/hdr_image.h
  target_link_libraries(fuzz_replay_${target} PRIVATE adjoint_app_scene)
  add_test(NAME FuzzCorpus.${target} COMMAND fuzz_replay_${target} ${fuzz_dir}/corpus/${target})
  set_tests_properties(FuzzCorpus.${target} PROPERTIES TIMEOUT 300 ENVIRONMENT "${ADJOINT_SANITIZE_TEST_ENVIRONMENT}")
endforeach()
