build/bin/ch11-gradients --causal --upstream "0,0;0,1;0,0"
