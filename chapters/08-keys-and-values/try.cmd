build/bin/ch08-keys-and-values --wk "0,2;2,0"
