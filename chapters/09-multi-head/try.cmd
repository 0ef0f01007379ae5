build/bin/ch09-multi-head --heads 1
