# Helpers for the demo's verdict lines: read a benchmark's JSON records
# (one per line) and print a value of one field.
#   awk -f verdict.awk -v want=FIELD -v key=K -v val=V -v key2=K2 -v val2=V2 FILE
# prints FIELD of the first record whose K is V (and K2 is V2, if given).
function field(rec, name,    r) {
	if (match(rec, "\"" name "\":\"?[^,\"}]*")) {
		r = substr(rec, RSTART, RLENGTH)
		sub(/^"[^"]*":"?/, "", r)
		return r
	}
	return ""
}
field($0, key) == val && (key2 == "" || field($0, key2) == val2) {
	print field($0, want)
	exit
}
