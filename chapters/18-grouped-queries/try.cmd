build/bin/ch18-grouped-queries --kv-heads 2 --wk "1,0,1,0;0,1,0,1" --wv "1,0,0,1;0,1,1,0"
