build/bin/ch05-softmax --tokens Mouse,Eats,Cheese --embeddings "4,0;2,4;4,0" --precision 6
