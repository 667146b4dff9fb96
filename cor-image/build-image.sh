#!/usr/bin/env bash
# ./cor image: the broker's OCI image, as one tarball (an OCI image layout, with a legacy
# manifest.json beside it so that `docker load` reads it too), built without a Docker daemon or a
# container registry. Run as root (apt-get, chroot, mounts); the jars must be built
# (./cor image builds them first, Maven's package phase of cor-image runs this after them).
#
#   cor-image/build-image.sh [OUT.tar]      (default cor-image/target/cor-image.tar)
#
# Four layers, the ones that change least first:
#   1. a root of Debian packages - the C library the JDK links against (libc6, libgcc-s1), taken
#      with apt-get download from this machine's apt sources and unpacked with dpkg-deb, nothing
#      else (no shell, no package manager) - and the user cor (uid 10001), /tmp, /data
#   2. a JDK 25 runtime, jlinked to the modules the jar needs (jdeps) plus jdk.management and
#      jdk.jcmd (the process metrics, and jcmd for an operator: docker exec ... jcmd 1 Thread.print)
#   3. the broker's jar, /opt/cor/cor-server.jar
#   4. its AOT cache, /opt/cor/cor-server.aot, trained in that root (chroot, as the user cor, on
#      the image's own runtime) on the workload of ./cor aot-train (benchmarks/aot-workload.sh)
# assembled by umoci (Debian's package, installed when missing); doc/image.md says why.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"
source "$here/benchmarks/aot-workload.sh"

out=${1:-$here/cor-image/target/cor-image.tar}
name=cor-server:latest
uid=10001
# The JVM's flags, the same in the training run and in the entrypoint (the cache is made for them):
# those of ./cor run (cor-server-launcher/jvm.options, the collector), written out in the entrypoint
# so that docker inspect shows them, and the heap, which may take 3/4 of the container's memory
# (the JVM's default, 1/4, suits a machine shared with others, not a container of its own).
mapfile -t jvm < <(sed -e 's/#.*//' "$here/cor-server-launcher/jvm.options" | tr -s ' \t' '\n' | grep -v '^$')
jvm+=(-XX:MaxRAMPercentage=75)
# The broker's flags for a container in the entrypoint, not the cmd: the flags given to `docker run`
# are added after them (a flag given again wins), where a cmd would be replaced by them - and with
# it --dataDir, which would move the data off the volume's root.
entrypoint=(/opt/java/bin/java -XX:AOTCache=/opt/cor/cor-server.aot "${jvm[@]}" -jar /opt/cor/cor-server.jar
  --host 0.0.0.0 --dataDir /data)

say() { echo "cor image: $*" >&2; }
[ "$(id -u)" = 0 ] || { say "needs root (apt-get, chroot and mounts for the AOT training)"; exit 2; }
[ -f "$BROKER_JAR" ] && [ -f "$BENCH_JAR" ] || { say "build first: ./cor image does ($BROKER_JAR, $BENCH_JAR)"; exit 2; }

apt_install() { # the Debian packages this script runs, when missing
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} = 0 ] && return 0
  say "apt-get install ${missing[*]}"
  apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; }
}
apt_install umoci jq

jdk=$("$here/cor" java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.home = //p')
bundle=$work/bundle
root=$bundle/rootfs
oci=$work/oci

# The training mounts /proc and a /dev of its own in the root; they are unmounted on every path,
# before anything is packed or removed (and the removal stays on this file system regardless).
unmount_root() {
  local m
  for m in "$root/dev" "$root/proc"; do
    mountpoint -q "$m" 2>/dev/null && umount "$m"
  done
  return 0
}
trap 'unmount_root; stop_all; rm -rf --one-file-system "$work"' EXIT
mount_root() {
  mount -t proc proc "$root/proc"
  mount -t tmpfs -o mode=0755,nosuid,size=64k cor-dev "$root/dev"
  local n
  for n in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9"; do
    set -- $n
    mknod -m 0666 "$root/dev/$1" c "$2" "$3"
  done
}

t0=$SECONDS
layer() { # COMMENT: the changes in the root since the last layer, as a new layer
  umoci repack --refresh-bundle --history.created_by "cor-image/build-image.sh" --history.comment "$1" --image "$oci:latest" "$bundle"
  say "  layer: $1 ($((SECONDS - t0)) s so far)"
}

say "an empty image (umoci)"
umoci init --layout "$oci"
umoci new --image "$oci:latest"
umoci unpack --image "$oci:latest" "$bundle" >/dev/null

say "1. Debian's C library"
mkdir -p "$work/debs"
debs=(libc6 libgcc-s1)
(cd "$work/debs" && { apt-get download -q "${debs[@]}" >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get download -q "${debs[@]}" >/dev/null; }; })
mkdir -p "$root/var/lib/dpkg/status.d"
for d in "$work"/debs/*.deb; do
  dpkg-deb -x "$d" "$root"
  # what image scanners read to know the packages and versions (as distroless images do)
  dpkg-deb -f "$d" >"$root/var/lib/dpkg/status.d/$(dpkg-deb -f "$d" Package)"
done
rm -rf "$root"/usr/share/{doc,lintian,man,info,locale} "$root"/usr/lib/x86_64-linux-gnu/gconv
echo 'include /etc/ld.so.conf.d/*.conf' >"$root/etc/ld.so.conf"
ldconfig -r "$root"
cp /usr/lib/os-release "$root/etc/os-release" # the packages are this machine's distribution's
printf 'root:x:0:0:root:/root:/sbin/nologin\ncor:x:%d:%d:cor:/data:/sbin/nologin\n' $uid $uid >"$root/etc/passwd"
printf 'root:x:0:\ncor:x:%d:\n' $uid >"$root/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts" # a runtime mounts its own
mkdir -p "$root/proc" "$root/dev" "$root/tmp" "$root/data" "$root/opt/cor"
chmod 1777 "$root/tmp"
chown $uid:$uid "$root/data"
chmod 0750 "$root/data"
layer "Debian's $(cd "$work/debs" && ls | sed 's/_amd64.deb//' | paste -sd ' '), the user cor ($uid), /data"

say "2. a jlinked JDK runtime"
modules=$("$jdk/bin/jdeps" --print-module-deps --ignore-missing-deps --multi-release 25 "$BROKER_JAR"),jdk.management,jdk.jcmd
"$jdk/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files --output "$root/opt/java"
layer "a JDK $("$root/opt/java/bin/java" -version 2>&1 | head -1 | cut -d'"' -f2) runtime jlinked to $modules"

say "3. the broker's jar"
install -m 0644 -o 0 -g 0 "$BROKER_JAR" "$root/opt/cor/cor-server.jar"
touch -d "@$(stat -c %Y "$BROKER_JAR")" "$root/opt/cor/cor-server.jar" # whole seconds: the cache checks it
layer "the broker, cor-server.jar"

say "4. the AOT cache, trained in the image's root on its own runtime, as the user cor"
port=$(free_port)
rport=$(free_port)
mount_root
aot_training_run "$port" "$rport" chroot --userspec=$uid:$uid "$root" /opt/java/bin/java -XX:AOTCacheOutput=/tmp/cor-server.aot \
  "${jvm[@]}" -jar /opt/cor/cor-server.jar --host 127.0.0.1 --port "$port" --dataDir /tmp/aot-train
unmount_root
[ -s "$root/tmp/cor-server.aot" ] || { say "the JVM wrote no cache:"; tail -20 "$work/broker.log" >&2; exit 1; }
install -m 0644 -o 0 -g 0 "$root/tmp/cor-server.aot" "$root/opt/cor/cor-server.aot"
find "$root/tmp" -mindepth 1 -delete # the training's data, its cache's work files, hsperfdata
layer "the AOT cache, cor-server.aot: trained in this image on the workload of ./cor aot-train"

say "the configuration: user, entrypoint, port, volume"
config=(--config.user "$uid:$uid" --config.workingdir /data --config.volume /data --config.exposedports 1026/tcp
  --config.env PATH=/opt/java/bin:/usr/bin:/bin --config.env JAVA_HOME=/opt/java --config.stopsignal SIGTERM
  --config.label org.opencontainers.image.title=cor-server
  --config.label "org.opencontainers.image.description=The cor NGSI-LD context broker"
  --config.label org.opencontainers.image.licenses=Apache-2.0
  --architecture amd64 --os linux)
for a in "${entrypoint[@]}"; do config+=(--config.entrypoint "$a"); done
commit=$(git -C "$here" rev-parse HEAD 2>/dev/null || true)
[ -n "$commit" ] && config+=(--config.label "org.opencontainers.image.revision=$commit")
umoci config --history.created_by "cor-image/build-image.sh" --history.comment "user, entrypoint, port, volume" \
  --image "$oci:latest" "${config[@]}"
umoci gc --layout "$oci"

# The name the loaders give it: containerd's (and Docker's with it) from the index's annotation,
# the legacy `docker load` and `podman load` from manifest.json, whose paths are the layout's blobs.
manifest=$(jq -r '.manifests[0].digest' "$oci/index.json" | sed 's/^sha256://')
jq --arg n "docker.io/library/$name" '.manifests[0].annotations["io.containerd.image.name"] = $n' "$oci/index.json" \
  >"$work/index.json" && mv "$work/index.json" "$oci/index.json"
jq --arg n "$name" '[{Config: ("blobs/sha256/" + (.config.digest | sub("^sha256:"; ""))), RepoTags: [$n],
  Layers: [.layers[].digest | "blobs/sha256/" + sub("^sha256:"; "")]}]' "$oci/blobs/sha256/$manifest" >"$oci/manifest.json"

mkdir -p "$(dirname "$out")"
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$oci" -cf "$out.tmp" oci-layout index.json manifest.json blobs
mv "$out.tmp" "$out"
say "$out ($(du -h "$out" | cut -f1), $(jq '.layers | length' "$oci/blobs/sha256/$manifest") layers) in $((SECONDS - t0)) s;" \
  "$(grep -c 'Skipping' "$work/broker.log" || true) classes left out of the cache"
say "load it: docker load < $out   (or podman load -i $out); it is $name"
