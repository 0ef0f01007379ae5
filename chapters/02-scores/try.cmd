build/bin/ch02-scores --wk "1,0;0,2"
