ch17-ring-attention --causal --ranks 3 --length 13
