#!/usr/bin/env bash
# One man page from --help, at build time: man_page.sh HELP2MAN EXE PAGE
# COMMAND DESCRIPTION OUT. help2man names a page after the program
# ("lanecast"); a command's page is lanecast-COMMAND(1), so its title and NAME
# line are renamed after help2man wrote them.
set -euo pipefail
help2man=$1 exe=$2 page=$3 command=$4 what=$5 out=$6
help_option=--help
[[ -n $command ]] && help_option="$command --help"
"$help2man" --no-info --section=1 --name="$what" --help-option="$help_option" \
  --version-option=--version --output="$out.tmp" "$exe"
if [[ $page != lanecast ]]; then
  upper=$(tr '[:lower:]' '[:upper:]' <<<"$page")
  sed -i -e "s/^\\.TH LANECAST /.TH ${upper//-/\\\\-} /" \
    -e "/^\\.SH NAME/{n;s/^lanecast /${page//-/\\\\-} /}" "$out.tmp"
fi
mv "$out.tmp" "$out"
