build/bin/ch04-masking --tokens pad,Mouse,Eats,Cheese --embeddings "0,0;2,0;1,2;2,0"
