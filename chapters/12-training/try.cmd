build/bin/ch12-training --seed 1
