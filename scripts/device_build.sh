# Sourced by the GPU-machine scripts (device_check.sh, profile.sh, python_check.sh), with
# $root set: configure_device_build DIR TESTS configures the Release CUDA build in DIR
# (TESTS: ON or OFF) against the carried CUTLASS headers, reporting the revision written to
# .deps/REVISION when there is one (the device copy's git lags).
configure_device_build() {
  local revision=()
  [ -f "$root/.deps/REVISION" ] && revision=(-DFUSEDMOE_REVISION="$(cat "$root/.deps/REVISION")")
  cmake -S "$root" -B "$1" -G Ninja "${revision[@]}" -DCMAKE_BUILD_TYPE=Release -DFUSEDMOE_CUDA=ON \
    -DFUSEDMOE_TESTS="$2" -DCUTLASS_DIR="$root/.deps/cutlass"
}
