#!/usr/bin/env bash
# Fails, naming the package, when the build or the tests use a Debian package that tools/setup.sh's list does not bring in.
#
#   tools/ci/check-packages.sh [BUILD_DIR] [PACKAGE_LIST]      (defaults: build, `tools/setup.sh --list-packages`)
#
# A fresh Debian 12 machine gets exactly the packages of the list and what they depend on (setup installs
# with --no-install-recommends), plus the base system. On this machine, which has more installed, the files
# the configure, the build and the tests actually use are gathered from a configured and built BUILD_DIR:
#   - absolute paths in CMakeCache.txt (compiler, cmake, found libraries and programs, package dirs);
#   - the CMake files the configure read (CMakeFiles/Makefile.cmake), and the files their imported
#     targets must find (CMake fails the configure when one is missing: glslang's glslangValidator);
#   - the headers of every compile (compiler_depend.make, *.d) and the libraries of every link (link.txt);
#   - the shared libraries each built program needs (ldd);
#   - what a Vulkan test loads at run time: the loader's driver and layer manifests and every library it
#     opens, lavapipe and the validation layer among them (VK_LOADER_DEBUG, LD_DEBUG).
# Each file's package comes from dpkg -S. A package is fine when it is in the list, in what the list depends
# on (Pre-Depends/Depends, not Recommends), or in the base system (Essential or Priority: required, and
# their dependencies); any other package fails the check, with the files that needed it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
[ -f "$build/CMakeCache.txt" ] || { echo "check-packages: $build is not a configured build folder" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [ -n "${2:-}" ]; then
  list="$2"
  [ -f "$list" ] || { echo "check-packages: no package list at $list" >&2; exit 2; }
else
  list="$tmp/setup-packages"
  "$here/tools/setup.sh" --list-packages > "$list"
fi
used="$tmp/used"   # lines: <path> TAB <where it came from>
: > "$used"

# Absolute paths in the values of CMakeCache.txt.
grep -v -e '^//' -e '^#' "$build/CMakeCache.txt" | sed -n 's/^[^=]*=//p' | tr ';' '\n' |
  grep -o '^/[^ ]*' | sed 's/$/\tCMakeCache.txt/' >> "$used" || true

# CMake files the configure read, and the files their imported targets require.
sed -n 's/^  "\(\/[^"]*\)"$/\1/p' "$build/CMakeFiles/Makefile.cmake" > "$tmp/cmake-read"
sed 's/$/\tread by the configure/' "$tmp/cmake-read" >> "$used"
while read -r f; do
  grep -q '_cmake_import_check_files_for_' "$f" 2>/dev/null || continue
  # The exported targets file sets _IMPORT_PREFIX to its own folder, then goes up once per such line.
  main="$(grep -l '_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_FILE}" PATH' "$(dirname "$f")"/*.cmake 2>/dev/null | head -1)"
  [ -n "$main" ] || continue
  prefix="$(dirname "$main")"
  ups="$(grep -c '^get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)' "$main" || true)"
  for ((i = 0; i < ups; i++)); do prefix="$(dirname "$prefix")"; done
  grep '_cmake_import_check_files_for_' "$f" | grep -o '"${_IMPORT_PREFIX}[^"]*"' | tr -d '"' |
    sed "s|\${_IMPORT_PREFIX}|$prefix|; s|\$|\timported by $f|" >> "$used" || true
done < "$tmp/cmake-read"

# Headers of every compile and libraries of every link.
find "$build" \( -name compiler_depend.make -o -name depend.make -o -name '*.d' \) -type f -print0 |
  xargs -0 -r cat | tr ' \t' '\n\n' | sed 's/:$//' | grep '^/' | sort -u |
  sed 's/$/\tincluded by a compile/' >> "$used" || true
find "$build" -name link.txt -type f -print0 | xargs -0 -r cat | tr ' \t' '\n\n' | grep '^/' | sort -u |
  sed 's/$/\tlinked/' >> "$used" || true

# Shared libraries of the built programs.
find "$build" -type f -perm -u+x ! -name '*.so*' ! -path '*/CMakeFiles/*' -print0 |
  while IFS= read -r -d '' f; do
    [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    ldd "$f" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'
  done | sort -u | sed 's/$/\tneeded by a built program/' >> "$used"

# What a Vulkan test opens at run time (lavapipe, the loader, the validation layer and their manifests).
probe="$build/tests/test_vulkan"
if [ -x "$probe" ]; then
  mkdir "$tmp/ld"
  ADJOINT_VALIDATION=1 ADJOINT_CACHE_DIR=off ASAN_OPTIONS=detect_leaks=0 VK_LOADER_DEBUG=driver,layer LD_DEBUG=libs \
    LD_DEBUG_OUTPUT="$tmp/ld/ld" "$probe" --gtest_filter='VulkanRuntime.ImageDispatch' > "$tmp/probe.log" 2>&1 ||
    echo "check-packages: note: the probe run of $probe failed (its libraries are still counted)"
  grep -o '/[^ ,"]*\.json' "$tmp/probe.log" | sort -u | sed 's/$/\tVulkan manifest/' >> "$used" || true
  cat "$tmp/ld"/ld.* 2>/dev/null | sed -n 's/.*calling init: \(\/.*\)$/\1/p' | sort -u |
    sed 's/$/\tloaded by a Vulkan test/' >> "$used" || true
else
  echo "check-packages: note: $probe is not built; run-time libraries are not checked"
fi

# Keep system files only (not the source or build tree), as given and as resolved through symlinks: a
# symlink's package must be installed for the link to exist, its target's package for the file.
awk -F'\t' -v src="$here/" -v bld="$build/" '
  $1 ~ /^\/(usr|lib|lib32|lib64|libx32|bin|sbin|etc|opt)\// && index($1, src) != 1 && index($1, bld) != 1 &&
  !seen[$1]++' "$used" > "$tmp/system"
: > "$tmp/files"
while IFS=$'\t' read -r path where; do
  [ -f "$path" ] || continue
  printf '%s\t%s\n' "$path" "$where" >> "$tmp/files"
  real="$(realpath "$path")"
  [ "$real" = "$path" ] || printf '%s\t%s\n' "$real" "$where" >> "$tmp/files"
done < "$tmp/system"

# dpkg records some files under /lib, /bin, /sbin and others under /usr/...: ask for both spellings.
awk -F'\t' '{ p = $1; print p; if (p ~ /^\/usr\/(lib|lib32|lib64|libx32|bin|sbin)\//) print substr(p, 5);
              else if (p ~ /^\/(lib|lib32|lib64|libx32|bin|sbin)\//) print "/usr" p }' "$tmp/files" |
  grep -v '[][*?]' | sort -u > "$tmp/query"
# Lines "pkg1, pkg2:arch: /path" become "pkg TAB path" a package, the path spelled without a leading /usr.
xargs -r -d '\n' dpkg -S < "$tmp/query" 2> /dev/null | grep -v '^diversion' |
  awk '{ i = index($0, ": "); if (!i) next; path = substr($0, i + 2); sub(/^\/usr\//, "/", path)
         n = split(substr($0, 1, i - 1), ps, ", ")
         for (j = 1; j <= n; j++) { sub(/:.*$/, "", ps[j]); print ps[j] "\t" path } }' |
  sort -u > "$tmp/owners" || true

# The packages a fresh machine has: the list, the base system, and everything they depend on.
sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$list" | sort -u > "$tmp/listed"
fields='${Package}\t${db:Status-Abbrev}\t${Essential}\t${Priority}\t${Pre-Depends}, ${Depends}\t${Provides}\n'
dpkg-query -W -f="$fields" > "$tmp/installed"
for p in $(cat "$tmp/listed"); do
  awk -F'\t' -v p="$p" '$1 == p && $2 ~ /^ii/ { found = 1 } END { exit !found }' "$tmp/installed" ||
    echo "check-packages: warning: listed package $p is not installed (run tools/setup.sh first)"
done
awk -F'\t' '
  # "libc6 (>= 2.34)", " python3:any": the bare package name.
  function clean(name) { sub(/^[ \t]+/, "", name); sub(/[ \t(].*$/, "", name); sub(/:.*$/, "", name)
                         return name }
  function add(p) { if (!(p in allowed)) { allowed[p] = 1; queue[++n] = p } }
  NR == FNR { listed[$1] = 1; next }
  $2 !~ /^ii/ { next }
  { inst[$1] = 1; deps[$1] = $5
    if ($3 == "yes" || $4 == "required") base[$1] = 1
    k = split($6, pv, ",")
    for (i = 1; i <= k; i++) { v = clean(pv[i]); if (v != "") prov[v] = prov[v] " " $1 } }
  END {
    for (p in listed) if (p in inst) add(p)
    for (p in base) add(p)
    for (q = 1; q <= n; q++) {
      g = split(deps[queue[q]], groups, ",")
      for (i = 1; i <= g; i++) {
        # Of alternatives "a | b", apt takes the first it can; count the first one present here.
        a = split(groups[i], alts, "|")
        for (j = 1; j <= a; j++) {
          name = clean(alts[j]); if (name == "") continue
          if (name in inst) { add(name); break }
          if (name in prov) { m = split(prov[name], ps, " "); for (x = 1; x <= m; x++) add(ps[x]); break }
        }
      }
    }
    for (p in allowed) print p
  }' "$tmp/listed" "$tmp/installed" | sort -u > "$tmp/allowed"

# A file is fine when one of its owners is allowed; otherwise each owner it has is reported.
awk -F'\t' '
  FILENAME == ARGV[1] { allowed[$1] = 1; next }
  FILENAME == ARGV[2] { owners[$2] = owners[$2] " " $1; next }
  { key = $1; sub(/^\/usr\//, "/", key); if (!(key in owners)) next   # a file of no package
    ok = 0; m = split(owners[key], ps, " "); for (j = 1; j <= m; j++) if (ps[j] in allowed) ok = 1
    if (!ok) for (j = 1; j <= m; j++) print ps[j] "\t" $1 "\t" $2 }
' "$tmp/allowed" "$tmp/owners" "$tmp/files" | sort -u > "$tmp/missing"

if [ -n "${CHECK_PACKAGES_VERBOSE:-}" ]; then
  echo "check-packages: packages used:"
  cut -f1 "$tmp/owners" | uniq -c | awk '{ print "  " $2 " (" $1 " files)" }'
fi
nfiles="$(cut -f1 "$tmp/files" | sort -u | wc -l)"
npkgs="$(cut -f1 "$tmp/owners" | sort -u | wc -l)"
if [ -s "$tmp/missing" ]; then
  shown="$(realpath "$list")"; shown="${shown#"$here"/}"
  echo "check-packages: FAILED: the build or the tests use Debian packages that $shown does not install:"
  for p in $(cut -f1 "$tmp/missing" | sort -u); do
    echo "  missing package: $p"
    awk -F'\t' -v p="$p" '$1 == p { print "      " $2 "  (" $3 ")" }' "$tmp/missing" | head -5
    extra=$(( $(awk -F'\t' -v p="$p" '$1 == p' "$tmp/missing" | wc -l) - 5 ))
    [ "$extra" -le 0 ] || echo "      ... and $extra more files"
  done
  echo "check-packages: add each missing package to the list in tools/setup.sh (which installs it)"
  exit 1
fi
echo "check-packages: ok: $nfiles files used from $npkgs Debian packages, all brought in by" \
     "$(wc -l < "$tmp/listed") listed packages or the base system"
