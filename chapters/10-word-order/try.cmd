build/bin/ch10-word-order --positions rope
