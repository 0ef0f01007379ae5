build/bin/ch03-scaling --wq "0,1,0,1;1,0,1,0" --wk "1,0,1,0;0,1,0,1" --seed 1
