# The benchmarks' common face (bench/bench_args.h): tests/bench-args.sh runs
# each built benchmark with --help, with bad values, and once for real with
# --json and --out_json, checking exit codes, messages and the records'
# metadata.  The benchmarks themselves are built by the top Makefile.

CHECK_CMDS += "sh tests/bench-args.sh $(B)"
