build/bin/ch06-mixing --wv "1,0,1;0,1,1"
