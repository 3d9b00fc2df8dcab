#!/usr/bin/env bash
# Every program's --version and man page (issue 21 §1):
#   - each command and daemon answers --version with "<name or tessera> <version>", exit 0;
#   - each has a man page (build/man, made from its --help by scripts/gen-man) that lists every
#     option its --help lists (checked on the rendered page, so roff escapes cannot hide one);
#   - under the Slurm names, --help says the Slurm name in its Usage line and nowhere the t-name.
#   man_version_test.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "$1" && pwd)"
BIN="$BUILD/bin"
fail() { echo "FAIL: $*" >&2; exit 1; }
export TESSERA_CONF=/nonexistent/tessera.conf MANWIDTH=200
# Every option --help names, in its option lines ("  -t, --time=TIME") or its prose ("Options
# are tbatch's: -N, -n, ..."): a dash-word after a line start, blank, comma, slash or bracket.
options() {
  grep -oE -- '(^|[ ,/([])--?[A-Za-z][A-Za-z0-9-]*' | grep -oE -- '--?[A-Za-z][A-Za-z0-9-]*' | sort -u
}
n=0
for prog in tbatch tqueue tcancel tinfo tcontrol tacct trun talloc tstat tattach tacctmgr tshare tprio \
            tessera-ctld tessera-noded tessera-stepd; do
  [ -x "$BIN/$prog" ] || fail "$BIN/$prog missing"
  v="$("$BIN/$prog" --version)" || fail "$prog --version exited $?"
  grep -qE "^(tessera|$prog) [0-9]+\.[0-9]+" <<<"$v" || fail "$prog --version printed '$v'"
  case "$prog" in tessera-*) sec=8 ;; *) sec=1 ;; esac
  page="$BUILD/man/man$sec/$prog.$sec"
  [ -f "$page" ] || fail "no man page $page"
  rendered="$(LC_ALL=C man -l "$page" 2>/dev/null | col -b)"
  grep -q "^NAME" <<<"$rendered" || fail "$page does not render"
  opts="$("$BIN/$prog" --help | options)"
  [ -n "$opts" ] || fail "$prog --help lists no options"
  for o in $opts; do
    grep -qF -- "$o" <<<"$rendered" || fail "$prog: $o is in --help but not in $page"
  done
  n=$((n + 1))
done
# --help against what each program's parser accepts, for every program above: the option
# tables the commands parse with (cli/lib: `{"name", 'x', ArgKind::` entries) and the
# hand-written parsers (`a == "--name"` in tacctmgr and the daemons). Every long option and every
# short letter a program accepts is named in its --help, so in its man page (checked above).
# talloc parses with tbatch's table and its --help sends the reader to tbatch --help for the
# rest, so talloc is checked against both; tstat_cmd.cc holds tstat's and tattach's tables.
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
table_of() {  # FILE [FIRST_LINE_PATTERN LAST_LINE_PATTERN]: the table entries, as --name and -x
  local text
  if [ $# -eq 3 ]; then text="$(sed -n "/$2/,/$3/p" "$1")"; else text="$(cat "$1")"; fi
  grep -oE '\{"[a-zA-Z][a-zA-Z0-9-]*", *('"'"'.'"'"'|0), *(ArgKind::|K::)' <<<"$text" \
    | sed -E "s/^\\{\"([^\"]*)\", *('(.)'|0).*/--\\1 -\\3/; s/ -\$//" | tr ' ' '\n'
}
parsed_by_hand() {  # FILE: the options compared against in `a == "--name"` / `w == "-x"` tests
  grep -oE '== "--?[a-zA-Z][a-zA-Z0-9-]*"' "$1" | grep -oE -- '--?[a-zA-Z][a-zA-Z0-9-]*'
}
accepted() {  # PROGRAM: every option it accepts, one a line
  case "$1" in
    tbatch|talloc) table_of "$SRC/cli/lib/batch_options.cc" ;;
    tstat) table_of "$SRC/cli/lib/tstat_cmd.cc" '^const std::vector<OptionSpec> kSpecs' '^};' ;;
    tattach) table_of "$SRC/cli/lib/tstat_cmd.cc" '^const std::vector<OptionSpec> kAttachSpecs' '^};' ;;
    trun) table_of "$SRC/cli/lib/trun_args.cc" ;;
    tacctmgr) parsed_by_hand "$SRC/cli/lib/tacctmgr_cmd.cc" ;;
    tessera-ctld) parsed_by_hand "$SRC/ctld/main.cc" ;;
    tessera-noded) parsed_by_hand "$SRC/noded/noded_main.cc" ;;
    tessera-stepd) parsed_by_hand "$SRC/noded/stepd_main.cc" ;;
    *) table_of "$SRC/cli/lib/${1}_cmd.cc" ;;
  esac | sort -u
}
checked=0
for prog in tbatch tqueue tcancel tinfo tcontrol tacct trun talloc tstat tattach tacctmgr tshare tprio \
            tessera-ctld tessera-noded tessera-stepd; do
  help="$("$BIN/$prog" --help)"
  [ "$prog" = talloc ] && help+=$'\n'"$("$BIN/tbatch" --help)"
  opts="$(accepted "$prog")"
  [ "$(wc -l <<<"$opts")" -ge 3 ] || fail "$prog: found too few accepted options in its source: $opts"
  for o in $opts; do
    grep -qE -- "(^|[^a-zA-Z0-9-])$o([^a-zA-Z0-9-]|\$)" <<<"$help" \
      || fail "$prog accepts $o but its --help does not name it"
    checked=$((checked + 1))
  done
done
# The Slurm names (the links tessera-slurm-compat installs).
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
for pair in tbatch:sbatch tqueue:squeue tcancel:scancel tinfo:sinfo tcontrol:scontrol tacct:sacct \
            trun:srun tshare:sshare tprio:sprio talloc:salloc tacctmgr:sacctmgr tstat:sstat tattach:sattach; do
  t="${pair%%:*}"; s="${pair##*:}"
  ln -s "$BIN/$t" "$TMP/$s"
  help="$("$TMP/$s" --help)"
  head -1 <<<"$help" | grep -q "^Usage: $s " || fail "$s --help: $(echo "$help" | head -1)"
  ! grep -qw "$t" <<<"$help" || fail "$s --help mentions $t"
done
echo "$n programs: --version and man pages OK; $checked accepted options all in --help; Slurm names OK"
