#!/bin/bash
# A critical section of the campaign, run by `redlock exec` (or by
# script_client.sh): logs its start to the fenced register, reads the
# counter, holds for $2 seconds, writes the counter + 1 with REDLOCK_FENCE,
# and logs its end. $1 is the kind of hold: excl, sem or read (only excl
# reads and writes the counter). A section killed before its end is seen by
# the register as a connection closed without END.
exec 3<>"/dev/tcp/127.0.0.1/$CAMPAIGN_REGISTER" || exit 90
trap 'echo "SIG TERM" >&3; [ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null; exit 143' TERM
echo "START $REDLOCK_NAME ${REDLOCK_FENCE:-0} $CAMPAIGN_CLIENT $$ $1 $2 ${REDLOCK_TOKEN:--}" >&3
read -r _ <&3
if [ "$1" = excl ]; then
  echo "GET $REDLOCK_NAME" >&3
  read -r value <&3
fi
sleep "$2" 3>&- &
sleeper=$!
wait "$sleeper"
sleeper=
if [ "$1" = excl ]; then
  echo "PUT $REDLOCK_NAME $((value + 1)) $REDLOCK_FENCE" >&3
  read -r _ <&3
fi
echo END >&3
read -r _ <&3
