build/bin/ch01-projection --tokens Mouse,Eats,Cheese --embeddings "2,0;1,2;0,2" --wv "1,1;0,1"
