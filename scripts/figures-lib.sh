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

# pivot SERIES [N]: "x series value..." lines (N values, default 1) -> one
# row per x, N columns per series in the order of SERIES; NaN where a
# cell is missing, which gnuplot skips
pivot() {
	awk -v series="$1" -v nv="${2:-1}" 'BEGIN { n = split(series, s, " ") }
	{
		row = $3
		for (f = 4; f < 3 + nv; f++) row = row " " $f
		v[$1, $2] = row
		if (!($1 in seen)) { seen[$1] = 1; xs[++nx] = $1 }
	}
	END {
		nan = "NaN"
		for (f = 2; f <= nv; f++) nan = nan " NaN"
		printf "# x"; for (i = 1; i <= n; i++) printf " %s", s[i]; printf "\n"
		for (j = 1; j <= nx; j++) {
			printf "%s", xs[j]
			for (i = 1; i <= n; i++) printf " %s", ((xs[j], s[i]) in v) ? v[xs[j], s[i]] : nan
			printf "\n"
		}
	}'
}

# spread: "x series value" lines, several per cell (one per run) -> one
# "x series median min max" line per cell, in the order cells first came
spread() {
	awk '{
		c = $1 " " $2
		if (!(c in n)) order[++nc] = c
		v[c, ++n[c]] = $3
	}
	END {
		for (j = 1; j <= nc; j++) {
			c = order[j]
			m = n[c]
			for (a = 1; a <= m; a++) s[a] = v[c, a]
			for (a = 2; a <= m; a++)	# insertion sort: a handful of runs
				for (b = a; b > 1 && s[b - 1] > s[b]; b--) { t = s[b]; s[b] = s[b - 1]; s[b - 1] = t }
			med = (m % 2) ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
			print c, med, s[1], s[m]
		}
	}'
}

# gp_head NAME TITLE XLABEL YLABEL: gnuplot's settings for $OUT/NAME.png
gp_head() {
	echo "set terminal pngcairo size 900,540 noenhanced font ',11'"
	echo "set output '$OUT/$1.png'"
	echo "set title '$2'"
	echo "set xlabel '$3'"
	echo "set ylabel '$4'"
	echo "set grid"
	echo "set key outside right top"
	# points at the ends stay clear of the border
	echo "set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05"
	echo "set autoscale noextend"
	gp_styles
}

# gp_styles: line styles 1..8, each a colour, dash, point type of its own.
# Curves that coincide (equal rates, e.g. protocols bound by the same link)
# would hide each other: earlier styles are wider with larger points, so a
# series drawn over another leaves the one under it showing around it.
gp_styles() {
	awk 'BEGIN {
		# Okabe-Ito colours: told apart with the common colour blindnesses
		split("#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #999999", c, " ")
		split("6 4 8 7 2 12 10 1", pt, " ")	# open circle, square, triangle, dot, x, ...
		# solid, dash, dash-dot, dash-dot-dot, long dash, ...: no dots,
		# which a thin line turns into a trace
		split("1 2 4 5 (16,6) 1 2 4", dt, " ")
		for (i = 1; i <= 8; i++) {
			lw = 3.5 - 0.5 * (i - 1); if (lw < 1.5) lw = 1.5
			ps = 2.4 - 0.3 * (i - 1); if (ps < 0.8) ps = 0.8
			printf "set style line %d lc rgb \"%s\" dt %s pt %d lw %.1f ps %.1f\n", i, c[i], dt[i], pt[i], lw, ps
		}
	}'
}

# gp_bars: gp_head's settings changed for a bar chart: the bars start at
# 0 and keep clear of the top; a label per bar, slanted, small enough for
# 14 of them
gp_bars() {
	echo "set offsets 0, 0, graph 0.05, 0"
	echo "set yrange [0:*]"
	echo "set xtics rotate by -45 font ',9'"
}

# gp_log AXES: log scales for the axes named in AXES ("", x, y or xy);
# x is a size or count in powers of two, y a rate spanning decades
gp_log() {
	case $1 in *x*) echo "set logscale x 2" ;; esac
	case $1 in *y*) echo "set logscale y 10"; echo "set mytics 10" ;; esac
}

# gp_lines DAT SERIES: gnuplot's plot line for DAT, a column per series
# from column 2 on, each in line style 1, 2, ... (gp_styles)
gp_lines() {
	printf "plot "
	i=2
	for s in $2; do
		[ $i -gt 2 ] && printf ", "
		printf "'%s' using 1:%d with linespoints ls %d title '%s'" \
			"$1" $i $((i - 1)) "$s"
		i=$((i + 1))
	done
	echo
}

# plot NAME TITLE XLABEL YLABEL LOG SERIES: $OUT/NAME.dat -> NAME.png, a
# column per series; LOG as gp_log's AXES
plot() {
	name=$1 title=$2 xl=$3 yl=$4 log=$5 series=$6
	{
		gp_head "$name" "$title" "$xl" "$yl"
		gp_log "$log"
		gp_lines "$OUT/$name.dat" "$series"
	} | gnuplot
	echo "figures: $OUT/$name.png"
}

# plot_spread NAME TITLE XLABEL YLABEL LOG SERIES: as plot, from a .dat of
# "median min max" per series (spread, then pivot SERIES 3): the median
# joined by lines, min..max as error bars.  Each series is nudged sideways
# (x is a power of two: by a factor) so the bars of close series stay apart;
# bars are solid whatever the series' dash, or a dotted one would vanish.
plot_spread() {
	name=$1 title=$2 xl=$3 yl=$4 log=$5 series=$6
	ns=$(echo $series | wc -w)
	{
		gp_head "$name" "$title" "$xl" "$yl"
		gp_log "$log"
		printf "plot "
		i=1
		for s in $series; do
			[ $i -gt 1 ] && printf ", "
			nudge=$(awk -v i=$i -v n="$ns" 'BEGIN { print 2 ^ ((i - (n + 1) / 2) * 0.05) }')
			printf "'%s' using (\$1*%s):%d:%d:%d with yerrorbars ls %d dt 1 lw 1.5 ps 0 notitle, " \
				"$OUT/$name.dat" "$nudge" $((3 * i - 1)) $((3 * i)) $((3 * i + 1)) $i
			printf "'%s' using (\$1*%s):%d with linespoints ls %d title '%s'" \
				"$OUT/$name.dat" "$nudge" $((3 * i - 1)) $i "$s"
			i=$((i + 1))
		done
		echo
	} | gnuplot
	echo "figures: $OUT/$name.png"
}
