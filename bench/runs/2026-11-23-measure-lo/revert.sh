#!/bin/sh
# Written by `twelve doctor --apply`: undoes its changes, newest first.
tc qdisc replace dev lo root tbf rate 5Mbit burst 32Kb lat 50ms
