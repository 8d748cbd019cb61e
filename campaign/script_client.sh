#!/bin/bash
# One round of the manual workload: acquire, the critical section, renew,
# release, each call logged to the fenced register (OP lines) so that the
# checker can build the acquire/release history. Arguments: NAME TTL WAIT
# HOLD; redlock's global options come from $CAMPAIGN_REDLOCK (a string of
# words).
name=$1 ttl=$2 wait=$3 hold=$4
# shellcheck disable=SC2206
redlock=($CAMPAIGN_REDLOCK)
exec 4<>"/dev/tcp/127.0.0.1/$CAMPAIGN_REGISTER" || exit 90
op() { echo "OP $CAMPAIGN_CLIENT $*" >&4; read -r _ <&4; }
op acquire invoke
out=$("${redlock[@]}" acquire --ttl "$ttl" --wait "$wait" --json "$name" 2>/dev/null)
rc=$?
if [ $rc -ne 0 ]; then
  op acquire "rc$rc"
  exit $rc
fi
# shellcheck disable=SC2001
token=$(sed 's/.*"token":"\([0-9a-f]*\)".*/\1/' <<<"$out")
# shellcheck disable=SC2001
fence=$(sed 's/.*"fence":\([0-9]*\).*/\1/' <<<"$out")
if [[ -z $token || -z $fence || $token == *[!0-9a-f]* || $fence == *[!0-9]* ]]; then
  # exit 0 without a token and a fence on stdout is not what acquire promises
  op acquire noanswer "$(tr -c '[:alnum:]{}:,"_' '.' <<<"$out" | head -c 200)"
  exit 70
fi
op acquire ok "$fence"
REDLOCK_NAME=$name REDLOCK_FENCE=$fence REDLOCK_TOKEN=$token bash "$(dirname "$0")/cs.sh" excl "$hold"
op renew invoke
"${redlock[@]}" renew --token "$token" --ttl "$ttl" "$name" 2>/dev/null
op renew "rc$?"
op release invoke
"${redlock[@]}" release --token "$token" "$name" 2>/dev/null
rc=$?
op release "rc$rc"
exit $rc
