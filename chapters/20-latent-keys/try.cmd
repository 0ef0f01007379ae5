build/bin/ch20-latent-keys --causal --wdkv "1,0;0,1" --wuk "1,0,0,1;0,1,1,0" --wuv "1,0;0,1"
