#!/usr/bin/env bash
# Builds a local OCI image for the bridge's podman runtime, since no registry is reachable: a
# root file system of Debian's busybox-static (/bin/busybox and its applets, /tmp), imported with
# `podman import` into USER's rootless image store (where the user's jobs run podman).
#   tests/bridge/oci-image.sh USER [IMAGE]     (IMAGE default localhost/tessera-busybox:1)
# Needs root (it runs podman as USER), podman and /bin/busybox (tests/bridge/install-oci-deps).
# Prints the image name.
set -euo pipefail
USER_NAME="${1:?usage: oci-image.sh USER [IMAGE]}"
IMAGE="${2:-localhost/tessera-busybox:1}"
BUSYBOX="${BUSYBOX:-/bin/busybox}"
file "$BUSYBOX" 2>/dev/null | grep -q "statically linked" ||
  { echo "oci-image.sh: $BUSYBOX is not a static busybox (apt-get install busybox-static)" >&2; exit 1; }
# Rootless podman needs subordinate ids for the user.
if ! grep -q "^$USER_NAME:" /etc/subuid 2>/dev/null; then
  usermod --add-subuids 200000-265535 --add-subgids 200000-265535 "$USER_NAME"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/root/bin" "$WORK/root/tmp" "$WORK/root/etc"
chmod 1777 "$WORK/root/tmp"
cp "$BUSYBOX" "$WORK/root/bin/busybox"
for a in $("$BUSYBOX" --list); do
  [ -e "$WORK/root/bin/$a" ] || ln -s busybox "$WORK/root/bin/$a"
done
tar -C "$WORK/root" -cf "$WORK/rootfs.tar" .
chmod 755 "$WORK"
chmod 644 "$WORK/rootfs.tar"
HOME_DIR="$(getent passwd "$USER_NAME" | cut -d: -f6)"
as_user() { (cd / && runuser -u "$USER_NAME" -- env HOME="$HOME_DIR" "$@"); }
import_image() {
  as_user podman import -q --change 'CMD ["/bin/sh"]' "$WORK/rootfs.tar" "$IMAGE" 2>"$WORK/err" >/dev/null
}
if ! import_image; then
  # A pause process recorded by an earlier boot (its pid file outlived it) stops every rootless
  # podman command of the user with "invalid internal status": podman's own remedy, then again.
  if grep -q "podman system migrate" "$WORK/err"; then
    as_user podman system migrate >/dev/null 2>&1 || true
    import_image || { cat "$WORK/err" >&2; exit 1; }
  else
    cat "$WORK/err" >&2
    exit 1
  fi
fi
echo "$IMAGE"
