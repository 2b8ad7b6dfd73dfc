#!/usr/bin/env bash
# lanecast as a user installs it: `meson install` of BUILD into a staging
# directory, then tests/install/ - an application with its own meson.build -
# configured with pkg-config pointed at that copy, built and run:
#   - the installed tree has the libraries, the five public headers and the
#     .pc files, and no header of lanecast's insides;
#   - the example's compile commands carry no DPDK include path (the public
#     API hides DPDK) and no path into the source tree;
#   - broadcast_example runs broadcasts on 4 members with every byte
#     checked; client_example is refused by a daemon that is not there;
#   - with liblanecast-mpi built: it and lanecast-mpi.pc are installed, and
#     an MPI program linked with it (before MPI's library) runs.
# Everything is made under one temporary directory, removed on exit.
#
# usage: tests/install/run.sh [BUILD]   (default: build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build=${1:-build}
work=$(mktemp -d /tmp/lanecast-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

DESTDIR="$work/stage" meson install -C "$build" --quiet --no-rebuild >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "meson install"; }
pcdir=$(find "$work/stage" -name lanecast.pc -printf '%h\n' | head -1)
[[ -n $pcdir ]] || fail "no lanecast.pc installed"
[[ -f $pcdir/lanecast-client.pc ]] || fail "no lanecast-client.pc installed"
libdir=$(dirname "$pcdir")
for l in liblanecast.so liblanecast-client.so; do [[ -e $libdir/$l ]] || fail "no $l in ${libdir#"$work/stage"}"; done
incdir=$(find "$work/stage" -type d -name lanecast -path '*/include/*' | head -1)
[[ -n $incdir ]] || fail "no include/lanecast installed"
headers=$(cd "$incdir" && ls)
[[ $headers == $'client.h\ncounters.h\ngroup_spec.h\nlanecast.h\nmpi.h' ]] || fail "installed headers: $headers"
echo "# installed: $(cd "$work/stage" && find . -type f | sort | tr '\n' ' ')"

export PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$work/stage
meson setup "$work/example" tests/install >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; fail "the example's meson setup"; }
ninja -C "$work/example" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "the example does not build"; }
commands=$(cat "$work/example/compile_commands.json")
grep -q "dpdk" <<<"$commands" && fail "the example was compiled with a DPDK path: $(grep -o '[^ ]*dpdk[^ ]*' <<<"$commands" | head -1)"
# Its include paths: its own directories, and the staged copy - none into
# lanecast's sources (its headers must come from the installed copy).
while read -r inc; do
  path=$(cd "$work/example" && realpath -m "$inc")
  case $path in
    "$work"/* | "$PWD/tests/install") ;;
    *) fail "the example was compiled with -I$inc ($path)" ;;
  esac
done < <(grep -o -- '-I[^ "]*' <<<"$commands" | sed 's/^-I//' | sort -u)
echo "# the example built against the staged copy: $(grep -o '"command": "[^"]*broadcast_example.cc[^"]*"' <<<"$commands" | head -1)"

export LD_LIBRARY_PATH=$libdir
loaded=$(ldd "$work/example/broadcast_example" | grep liblanecast || true)
[[ $loaded == *"$libdir/liblanecast.so"* ]] || fail "broadcast_example does not load the staged liblanecast.so: $loaded"
"$work/example/broadcast_example" || fail "broadcast_example"
mkdir "$work/no-daemon"
"$work/example/client_example" "$work/no-daemon" || fail "client_example"

# liblanecast-mpi, where the build made it (Open MPI found): its library and
# .pc installed, and an MPI program linked with it before MPI's own.
if [[ -e $build/apps/mpi/liblanecast-mpi.so ]]; then
  [[ -e $libdir/liblanecast-mpi.so && -f $pcdir/lanecast-mpi.pc ]] || fail "liblanecast-mpi.so or lanecast-mpi.pc not installed"
  if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    # shellcheck disable=SC2046
    mpicc.openmpi -o "$work/mpi_linked_example" tests/install/mpi_linked_example.c \
      $(pkg-config --cflags --libs lanecast-mpi) || fail "mpi_linked_example does not build"
    ldd "$work/mpi_linked_example" | grep -q "$libdir/liblanecast-mpi.so" || fail "mpi_linked_example does not load the staged liblanecast-mpi.so"
    mpirun.openmpi --allow-run-as-root -np 1 "$work/mpi_linked_example" || fail "mpi_linked_example"
  fi
fi
echo "install: ok"
