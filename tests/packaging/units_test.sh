#!/usr/bin/env bash
# The systemd units as the packages install them (issue 21 §1): installed with the packages'
# prefix (/usr) into a scratch root by the same install rules CPack uses, then
#   - `systemd-analyze verify` accepts both units (run against that root);
#   - the @SBINDIR@/@DOCDIR@ marks are filled in, ExecStart= names an installed program, and
#     every Documentation= target (man page, file) is installed;
#   - the controller unit, sandboxed with ProtectSystem=strict, declares /run/tessera as its
#     RuntimeDirectory= (ctld's default local socket lives there), and tmpfiles.d creates it too;
#   - each ExecStart= line runs: the program starts and answers --version / refuses a missing
#     config with the path in the message (no daemon is left running).
#   units_test.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "$1" && pwd)"
DEST="$(mktemp -d)"
trap 'rm -rf "$DEST"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
for c in common controller node client; do
  DESTDIR="$DEST" cmake --install "$BUILD" --prefix /usr --component "$c" >/dev/null
done
UNITS="$DEST/usr/lib/systemd/system"
for u in tessera-ctld tessera-noded; do
  f="$UNITS/$u.service"
  [ -f "$f" ] || fail "$f not installed"
  ! grep -q '@SBINDIR@\|@DOCDIR@' "$f" || fail "$u: unfilled @ marks"
  exec_line="$(sed -n 's/^ExecStart=//p' "$f")"
  prog="${exec_line%% *}"
  [ "$prog" = "/usr/sbin/$u" ] || fail "$u: ExecStart runs $prog"
  [ -x "$DEST$prog" ] || fail "$u: $prog is not installed"
  for d in $(sed -n 's/^Documentation=//p' "$f"); do
    case "$d" in
      file:*) [ -f "$DEST${d#file:}" ] || fail "$u: Documentation=$d is not installed" ;;
      man:*) n="${d#man:}"; name="${n%(*}"; sec="${n#*(}"; sec="${sec%)}"
             [ -f "$DEST/usr/share/man/man$sec/$name.$sec" ] || fail "$u: Documentation=$d is not installed" ;;
      *) fail "$u: unexpected Documentation=$d" ;;
    esac
  done
  # The ExecStart line itself, from the scratch root: --version answers; without a config
  # the program refuses, naming the file.
  cmd="${exec_line//%H/$(hostname)}"
  # shellcheck disable=SC2086
  v="$("$DEST"$cmd --version)"; grep -q "^$u [0-9]" <<<"$v" || fail "$u: $cmd --version: $v"
  out="$(TESSERA_CONF=/nonexistent/tessera.conf timeout 10 "$DEST"${cmd/\/etc\/tessera\/tessera.conf//nonexistent/tessera.conf} 2>&1 || true)"
  grep -q "/nonexistent/tessera.conf" <<<"$out" || fail "$u: a missing config is not named: $out"
done
ctld="$UNITS/tessera-ctld.service"
grep -q '^ProtectSystem=strict' "$ctld" || fail "ctld unit: ProtectSystem=strict expected"
grep -q '^RuntimeDirectory=tessera$' "$ctld" || fail "ctld unit: no RuntimeDirectory=tessera"
grep -q '^RuntimeDirectoryPreserve=yes' "$ctld" || fail "ctld unit: /run/tessera must outlive a ctld stop"
grep -q '^ReadWritePaths=-/var/backups/tessera$' "$ctld" || fail "ctld unit: tcontrol backup's directory is read-only"
grep -q '^d /var/backups/tessera 0700 root root' "$DEST/usr/lib/tmpfiles.d/tessera-controller.conf" \
  || fail "tmpfiles.d: /var/backups/tessera"
grep -q '^d /run/tessera 0755 root root' "$DEST/usr/lib/tmpfiles.d/tessera.conf" || fail "tmpfiles.d: /run/tessera"
if command -v systemd-analyze >/dev/null; then
  # verify checks ExecStart= programs and man: pages on this machine: point a copy of the units
  # at the scratch root (the packages' programs) and MANPATH at its man pages.
  mkdir -p "$DEST/verify"
  for u in tessera-ctld tessera-noded; do
    sed "s|^ExecStart=/usr/sbin/|ExecStart=$DEST/usr/sbin/|" "$UNITS/$u.service" >"$DEST/verify/$u.service"
  done
  out="$(MANPATH="$DEST/usr/share/man" systemd-analyze verify \
         "$DEST/verify/tessera-ctld.service" "$DEST/verify/tessera-noded.service" 2>&1)" \
    || fail "systemd-analyze verify: $out"
  # Units these depend on may be absent here (munge, nvidia-persistenced): not our findings.
  ours="$(grep -v "munge.service\|nvidia-persistenced\|remote-fs" <<<"$out" | grep -i "tessera" || true)"
  [ -z "$ours" ] || fail "systemd-analyze verify: $ours"
fi
echo "units OK"
