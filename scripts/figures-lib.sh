# Helpers of make figures' scripts (figures.sh, figures-verbs.sh), sourced:
# they expect $OUT, the directory the PNGs go to.

# jcol KEY...: each JSON line on stdin -> the values of KEYs, space separated
jcol() {
	awk -v keys="$*" 'BEGIN { n = split(keys, k, " ") }
	/^\{/ {
		line = ""
		for (i = 1; i <= n; i++) {
			v = "?"
			if (match($0, "\"" k[i] "\":\"?[^,\"}]*")) {
				v = substr($0, RSTART + length(k[i]) + 3, RLENGTH - length(k[i]) - 3)
				sub(/^"/, "", v)
			}
			line = line (i > 1 ? " " : "") v
		}
		print line
	}'
}

# pivot: "x series y" lines -> one row per x, a column per series in the
# order of SERIES
pivot() {
	awk -v series="$1" 'BEGIN { n = split(series, s, " ") }
	{ v[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; xs[++nx] = $1 } }
	END {
		printf "# x"; for (i = 1; i <= n; i++) printf " %s", s[i]; printf "\n"
		for (j = 1; j <= nx; j++) {
			printf "%s", xs[j]
			for (i = 1; i <= n; i++) printf " %s", ((xs[j], s[i]) in v) ? v[xs[j], s[i]] : "NaN"
			printf "\n"
		}
	}'
}

# gp_head NAME TITLE XLABEL YLABEL: gnuplot's settings for $OUT/NAME.png
gp_head() {
	echo "set terminal pngcairo size 800,500 noenhanced"
	echo "set output '$OUT/$1.png'"
	echo "set title '$2'"
	echo "set xlabel '$3'"
	echo "set ylabel '$4'"
	echo "set grid"
	echo "set key outside right"
}

# plot NAME TITLE XLABEL YLABEL LOGX SERIES: $OUT/NAME.dat -> NAME.png
plot() {
	name=$1 title=$2 xl=$3 yl=$4 logx=$5 series=$6
	{
		gp_head "$name" "$title" "$xl" "$yl"
		[ "$logx" = 1 ] && echo "set logscale x 2"
		printf "plot "
		i=2
		for s in $series; do
			[ $i -gt 2 ] && printf ", "
			printf "'%s' using 1:%d with linespoints title '%s'" "$OUT/$name.dat" $i "$s"
			i=$((i + 1))
		done
		echo
	} | gnuplot
	echo "figures: $OUT/$name.png"
}
