# Sourced by the scripts that debootstrap Debian from this machine's own mirror
# (scripts/build-image.sh, tests/package/in-chroot.sh, tests/slurm/slurm24-rootfs.sh).
#
# host_source SUITE_REGEX EXCLUDE_REGEX: the URI of the first apt source, deb822 .sources
# or one-line .list, whose suites match SUITE_REGEX and that does not match EXCLUDE_REGEX
# (empty: nothing excluded); prints nothing when there is none.
#   host_source bookworm security            # the bookworm mirror
#   host_source bookworm-security ""         # its security mirror
host_source() {
  local u
  u=$(awk -v RS= -v want="$1" -v skip="$2" '$0 ~ "(^|\n)Suites:[^\n]*" want && (skip == "" || $0 !~ skip) {
        if (match($0, /URIs:[ \t]*[^ \t\n]+/)) { s = substr($0, RSTART, RLENGTH); sub(/URIs:[ \t]*/, "", s); print s; exit } }' \
        /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [[ -n $u ]] || u=$(grep -hsE "^deb +(\[[^]]*\] +)?[a-z]+://[^ ]+ +$1" /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
                     { if [[ -n $2 ]]; then grep -vE "$2"; else cat; fi; } | head -1 |
                     sed -E 's/^deb +(\[[^]]*\] +)?//' | awk '{print $1}' || true)
  echo "$u"
}
