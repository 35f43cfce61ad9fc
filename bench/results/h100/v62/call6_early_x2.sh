#!/usr/bin/env bash
# v62 call 6: ex2 = ex + the one-tile x of every block of a stage loaded a stage ahead (each
# block's x right after its use, for the same block of the next stage): call 3's steps, ex
# against ex2.
#   carry: ["build/carry/ex.tgz", "build/carry/ex2.tgz"]
A=ex B=ex2 W=w6 bash bench/results/h100/v62/call3_early_x.sh
