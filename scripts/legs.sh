# Sourced by scripts/test.sh: runs the test command's legs one by one and, when
# the script ends (passed or failed), prints each leg's wall time.
#   leg "name" command args...   runs one leg and records its time
#   quiet LOG                    fails when LOG has a line that looks like an error
leg_names=()
leg_secs=()
leg_started=$SECONDS
leg_running=""

leg() {
  local name=$1 t0=$SECONDS
  shift
  echo "== $name"
  leg_running=$name
  "$@"
  leg_running=""
  leg_names+=("$name")
  leg_secs+=($((SECONDS - t0)))
}

# What a newcomer reads as a failure: an "error:" (any case) or a Python
# traceback. Real failures end the script on their own; this catches noise.
quiet() {
  if grep -n -i -E "error:|traceback" "$1"; then
    echo "FAILED: the lines above (from $1) look like errors although nothing failed"
    return 1
  fi
}

leg_table() {
  local status=$? i
  echo
  echo "== Legs (wall time)"
  for i in "${!leg_names[@]}"; do
    printf "  %-58s %4d:%02d\n" "${leg_names[$i]}" $((leg_secs[i] / 60)) $((leg_secs[i] % 60))
  done
  [ -n "$leg_running" ] && printf "  %-58s %s\n" "$leg_running" "FAILED"
  local total=$((SECONDS - leg_started))
  printf "  %-58s %4d:%02d\n" "total" $((total / 60)) $((total % 60))
  return $status
}
trap leg_table EXIT
