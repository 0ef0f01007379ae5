build/bin/ch07-attention --causal
