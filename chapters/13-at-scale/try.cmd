build/bin/ch13-at-scale --causal --key-block 1
