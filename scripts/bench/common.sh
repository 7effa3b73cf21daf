# What the on-demand benches (scripts/bench.sh, fairness.sh, tracing-cost.sh) share. Sourced after
# scripts/pg.sh, from the repository's root.

# A step's heading, on standard error (standard output carries the results).
say() { printf '\n== %s\n' "$*" >&2; }

# The release binaries the benches run: the API, the worker and quickact-bench.
build_release_binaries() {
  say "building the release binaries"
  SQLX_OFFLINE=true cargo build --release --locked -p quickact-api -p quickact-worker -p quickact-testkit >&2
}

# Reads the script's options: $1 is each option's default as `name=value` (space-separated), the
# rest is the command line, where `--name value` sets the variable of that name (dashes as
# underscores: --slow-concurrency sets slow_concurrency). -h or --help prints the script's opening
# comment; an option not among the defaults stops the script.
read_options() {
  local known=" " default name
  for default in $1; do
    name=${default%%=*}
    printf -v "$name" '%s' "${default#*=}"
    known+="$name "
  done
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
      --?*)
        name=${1#--}
        name=${name//-/_}
        [[ $known == *" $name "* ]] || { echo "unknown argument $1 (see --help)" >&2; exit 2; }
        [ $# -ge 2 ] || { echo "$1 needs a value (see --help)" >&2; exit 2; }
        printf -v "$name" '%s' "$2" ;;
      *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift 2
  done
}
