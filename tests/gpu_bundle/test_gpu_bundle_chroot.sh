#!/usr/bin/env bash
# gpu_bundle_chroot (tests/gpu_bundle/CMakeLists.txt): the GPU bundle on a root that holds nothing
# of the build machine, as the GPU machine is: glibc, a shell and its tools, python3, and PyTorch's
# `nvidia` wheels (site-packages/nvidia/{cublas,cudnn,nccl,cuda_runtime,cuda_nvrtc,nvjitlink}/lib,
# made here from this machine's CUDA 13 libraries, with the wheels' dist-info), and no
# /usr/local/cuda, no ld.so.cache, no system Open MPI. On it the bundle's own library discovery
# must choose the folders, every bundled program must resolve every library but the driver's,
# `accelbench --version` and `env` must run and say "no GPU" cleanly, and `--from` must reach its
# summary with exit 5: with LD_LIBRARY_PATH unset and set. The root is made of hard links (no
# copies) and entered with chroot in a mount namespace of this test (/proc and /dev bound in).
# Skipped (77) with the reason: not root, no mount namespace, no CUDA 13 toolkit, another file
# system, or no CUDA build (no bundle).
#   test_gpu_bundle_chroot.sh SOURCE_DIR BUNDLE_DIR
set -u -o pipefail
src="$1" bundle="${2:-}"
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -n "$bundle" ] || skip "CUDA backends not built: there is no GPU bundle"
[ -f "$bundle/bundle.tar.xz" ] || fail "no bundle at $bundle (target gpu_bundle)"
[ "$(id -u)" -eq 0 ] || skip "chroot needs root"
unshare -m true 2>/dev/null || skip "no mount namespace here (unshare -m)"
cuda=$(readlink -f /usr/local/cuda/lib64 2>/dev/null)
[ -e "$cuda/libcublasLt.so.13" ] && [ -e "$cuda/libcudnn.so.9" ] && [ -e "$cuda/libnccl.so.2" ] ||
  skip "no CUDA 13 toolkit with cuDNN 9 and NCCL at /usr/local/cuda to make the wheels from"
py=/usr/bin/python3
[ -x "$py" ] || skip "no $py"
pyver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root"/{bin,lib64,tmp,proc,dev,bundle,out,etc} "$root/usr/lib/x86_64-linux-gnu"
ln -s bin "$root/usr/bin" 2>/dev/null || true
# A file into the root at the same path, as a hard link (a copy would be gigabytes).
put() {
  local f=$1 to=${2:-$1}
  [ -e "$root$to" ] && return 0
  mkdir -p "$(dirname "$root$to")"
  ln "$(readlink -f "$f")" "$root$to" 2>/dev/null || { echo "cannot hard-link $f"; return 1; }
}
# A program and every library it needs (what ldd finds on this machine).
put_program() {
  local p; p=$(type -P "$1") || return 0
  put "$p" "/bin/$(basename "$p")" || return 1
  local lib
  for lib in $(ldd "$p" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
    put "$lib" "/lib/x86_64-linux-gnu/$(basename "$lib")" || return 1
  done
}
mkdir -p "$root/lib/x86_64-linux-gnu"
ln -s lib/x86_64-linux-gnu "$root/lib64/x86_64-linux-gnu" 2>/dev/null
put /lib64/ld-linux-x86-64.so.2 /lib64/ld-linux-x86-64.so.2 || skip "another file system: cannot hard-link glibc into $tmp"
# glibc's libraries that programs open without naming them in ldd's list (NSS, libm, ...).
for f in /lib/x86_64-linux-gnu/lib{c,m,dl,rt,pthread,resolv,util,anl,nss_files,mvec}.so.*; do
  [ -e "$f" ] && put "$f" "/lib/x86_64-linux-gnu/$(basename "$f")"
done
for t in bash sh env cat cp mv rm mkdir mktemp ls ln touch tr cut sort uniq head tail wc tee date \
         sleep timeout kill printf basename dirname readlink realpath find xargs grep sed awk mawk gawk \
         tar xz gzip du df id nproc uname hostname stat true false seq mkfifo chmod expr sha256sum \
         ldd getconf od; do
  put_program "$t" || skip "cannot hard-link $t into the root"
done
put_program "$py" || skip "cannot hard-link python3"
ln -sf "python$pyver" "$root/bin/python3" 2>/dev/null; put "$py" "/bin/python$pyver"
# The standard library (hard links, file by file).
(cd / && find "usr/lib/python$pyver" -type f ! -path '*/__pycache__/*' ! -path '*/test/*' -print0) |
  while IFS= read -r -d '' f; do put "/$f"; done
echo "root:x:0:0:root:/tmp:/bin/bash" > "$root/etc/passwd"
# PyTorch's nvidia wheels, each with its dist-info as pip writes it.
site=$root/usr/lib/python3/dist-packages
wheel() { # wheel NAME DIST FILE...
  local name=$1 dist=$2 f; shift 2
  mkdir -p "$site/nvidia/$name/lib" "$site/$dist.dist-info"
  for f in "$@"; do
    put "$f" "/usr/lib/python3/dist-packages/nvidia/$name/lib/$(basename "$f")" || return 1
    echo "nvidia/$name/lib/$(basename "$f"),sha256=x,1" >> "$site/$dist.dist-info/RECORD"
  done
}
wheel cublas nvidia_cublas_cu13-13.0.0 "$cuda"/libcublas.so.13 "$cuda"/libcublasLt.so.13 &&
  wheel cudnn nvidia_cudnn_cu13-9.19.0 "$cuda"/libcudnn*.so.9 &&
  wheel nccl nvidia_nccl_cu13-2.27.7 "$cuda"/libnccl.so.2 &&
  wheel cuda_runtime nvidia_cuda_runtime_cu13-13.0.0 "$cuda"/libcudart.so.13 &&
  wheel cuda_nvrtc nvidia_cuda_nvrtc_cu13-13.0.0 "$cuda"/libnvrtc.so.13 "$cuda"/libnvrtc-builtins.so.13* &&
  wheel nvjitlink nvidia_nvjitlink_cu13-13.0.0 "$cuda"/libnvJitLink.so.13 ||
  skip "cannot hard-link the CUDA libraries into the root"
# Nothing of the build machine: no CUDA installation, no loader cache, no system Open MPI.
[ ! -e "$root/usr/local/cuda" ] && [ ! -e "$root/etc/ld.so.cache" ] || fail "the root holds the build machine's CUDA or loader cache"
cp -r "$bundle/bundle.tar.xz" "$bundle/gpu-check.sh" "$bundle/MANIFEST" "$root/bundle/"
echo "root: $(find "$root" -type f | wc -l) files (hard links), python $pyver"

# in_root [VAR=VALUE...] COMMAND...: runs COMMAND in the root, with a clean environment.
in_root() {
  unshare -m bash -c 'mount --rbind /proc "$1/proc" && mount --rbind /dev "$1/dev" || exit 90
    r=$1; shift; exec chroot "$r" /bin/env -i PATH=/bin HOME=/tmp TMPDIR=/tmp "$@"' _ "$root" "$@"
}
rc=0
in_root /bin/bash -c 'python3 -c "import nvidia, json, lzma; print(sorted(nvidia.__path__))"' > "$tmp/py.txt" 2>&1 || rc=$?
[ "$rc" -ne 90 ] || skip "cannot mount /proc and /dev into the root"
[ "$rc" -eq 0 ] || fail "python3 in the root: $(cat "$tmp/py.txt")"

for ldp in "" "/host-lib"; do
  mkdir -p "$root/host-lib"
  what=${ldp:+"LD_LIBRARY_PATH=$ldp"}; what=${what:-"LD_LIBRARY_PATH unset"}
  rm -rf "$root/out" "$root/bundle/unpacked" && mkdir "$root/out"
  rc=0
  in_root ${ldp:+LD_LIBRARY_PATH=$ldp} /bin/bash /bundle/gpu-check.sh --from /bundle --out /out \
    > "$tmp/run.log" 2>&1 || rc=$?
  s=$root/out/summary.txt
  echo "== --from in the root ($what): exit $rc"
  [ -f "$s" ] || { cat "$tmp/run.log"; fail "$what: no summary written"; }
  [ "$rc" -eq 5 ] || { cat "$s"; fail "$what: exit $rc, not 5 (no GPU)"; }
  grep -q '^no GPU: nothing measured' "$s" || fail "$what: the summary does not say 'no GPU'"
  grep -q '^PASS env ' "$s" || fail "$what: accelbench env did not pass: $(grep ' env' "$s")"
  ! grep -q '^FAIL' "$s" || fail "$what: $(grep '^FAIL' "$s")"
  grep -q '^libraries: all [1-9][0-9]* non-CUDA libraries resolve from the bundle' "$s" ||
    fail "$what: the bundle's own library check did not pass"
  for w in cublas cudnn nccl; do
    grep -q "^libs: use /usr/lib/python3/dist-packages/nvidia/$w/lib" "$s" ||
      fail "$what: the discovery did not choose nvidia/$w/lib: $(grep '^libs' "$s")"
  done
  # Every bundled program resolves every library but the driver's, on the path --from chose.
  path=$(sed -n 's/^library path of the programs: //p' "$s")
  [ -n "$path" ] || fail "$what: the summary has no library path"
  for p in "$root"/bundle/unpacked/bin/*; do
    in_root LD_LIBRARY_PATH="$path" /bin/ldd "/bundle/unpacked/bin/$(basename "$p")" > "$tmp/ldd.txt" 2>&1
    grep 'not found' "$tmp/ldd.txt" | grep -v 'libcuda\.so' > "$tmp/missing.txt"
    [ ! -s "$tmp/missing.txt" ] || fail "$what: $(basename "$p") misses $(tr -s ' \n' ' ' < "$tmp/missing.txt")"
  done
  rc=0
  in_root LD_LIBRARY_PATH="$path" /bundle/unpacked/bin/accelbench --version > "$tmp/v.txt" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || fail "$what: accelbench --version exit $rc: $(head -3 "$tmp/v.txt")"
  rc=0
  in_root LD_LIBRARY_PATH="$path" ACCELBENCH_HOME=/bundle/unpacked/share \
    /bundle/unpacked/bin/accelbench env > "$tmp/env.txt" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || fail "$what: accelbench env exit $rc: $(head -5 "$tmp/env.txt")"
  grep -qE '^backend +cuda +unavailable' "$tmp/env.txt" || fail "$what: env does not say the GPU is unavailable: $(grep backend "$tmp/env.txt")"
  grep -qE '^library +cudnn +9\.' "$tmp/env.txt" || fail "$what: env loaded no cuDNN from the wheel"
  grep -qiE 'error while loading|cannot load' "$tmp/env.txt" && fail "$what: $(grep -iE 'error while|cannot load' "$tmp/env.txt")"
  echo "$what: --from exit 5 with its summary; every program resolves its libraries; --version and env run ('no GPU')"
done
echo PASS
