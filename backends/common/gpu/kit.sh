# shellcheck shell=bash
# Sourced by the GPU kits' scripts (backends/cuda/test/gpu/package-*.sh,
# backends/vulkan/test/gpu/bench-*.sh): what making a kit here and running
# it on the GPU machine share. The GPU machine has no package registry and
# no compiler: a kit carries Debian's packages and the runtime without LLVM.

# Here: the Debian packages the runtime and NVIDIA's Vulkan ICD need there
# (libvulkan1, GLVND, spdlog, fmt), downloaded once into DIR.
gpu_kit_debs() { # DIR
  mkdir -p "$1"
  if ! ls "$1"/*.deb >/dev/null 2>&1; then
    (cd "$1" && apt-get download libvulkan1 libglvnd0 libglx0 libgl1 libegl1 \
      libopengl0 libgles2 libspdlog1.10 libfmt9)
  fi
}

# Here: libtk_runtime.so, the driver plugins and tk-conformance-run from
# BUILD, stripped, as KIT/rt.txz (under 1 MB).
gpu_kit_runtime() { # BUILD KIT
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/build/bin" "$stage/build/lib"
  cp "$1/bin/tk-conformance-run" "$stage/build/bin/"
  cp -a "$1"/lib/libtk_runtime.so* "$1"/lib/libtk_driver_*.so "$stage/build/lib/"
  strip --strip-unneeded "$stage"/build/bin/* "$stage"/build/lib/*.so* 2>/dev/null || true
  tar -C "$stage" -cJf "$2/rt.txz" build
  rm -rf "$stage"
}

# There: the kit's Debian packages unpacked over / and its runtime into
# WORK/rt, which LD_LIBRARY_PATH and TK_BACKEND_PATH then name.
gpu_kit_unpack() { # KIT WORK
  local deb
  for deb in "$1"/debs/*.deb; do dpkg -x "$deb" /; done
  ldconfig
  mkdir -p "$2/rt" && tar -C "$2/rt" -xJf "$1/rt.txz"
  export LD_LIBRARY_PATH=$2/rt/build/lib TK_BACKEND_PATH=$2/rt/build/lib
}

# There: "step 'NAME': status S" into STEPS_FILE, counting failures.
gpu_kit_record() { # NAME STATUS
  echo "step '$1': status $2" | tee -a "${STEPS_FILE:?}"
  [ "$2" -eq 0 ] || failures=$((failures + 1))
}
